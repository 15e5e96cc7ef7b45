"""Keeping Python's garbage collector from pausing every chat while a heavy user's memory loads.

A cold load builds hundreds of thousands of objects (items, their fields, the index) in a
worker thread. CPython's automatic full collections scan every tracked object of the process,
the growing load included, and hold the GIL while they do, so each one paused the event loop
for longer (244 ms at 100k items), and the first full collection after the load scanned it all
once more. Two measures, both here:

- While any load runs, automatic full (generation 2) collections wait: the loader allocates
  far more than it frees, so they would find little. Young collections still run, so short-
  lived cycles are freed as usual. The previous thresholds come back in a `finally`, when the
  last of concurrent loads ends.
- After a load of at least `FREEZE_MIN_ITEMS` items, `gc.freeze()` moves every object alive
  to the permanent generation, which later collections never scan: a heavy user's items stay
  for hours and hold no reference cycles, so scanning them again would only pause the loop.
  They are still freed, by reference counting, when the user leaves the cache. The price: a
  cycle of garbage alive at that moment (gen 0 and 1 are collected first, so only older ones)
  is never collected. Freezing only after heavy loads keeps that rare and small; smaller
  loads add little for a full collection to scan.

Choosing both over `gc.disable()`: disabling stops young collections too (memory grows by
every short-lived cycle of the loop meanwhile), and without the freeze the pause only moves to
the first full collection after the load.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_MIN_ITEMS = 10_000
"""A load at least this large is frozen out of later full collections."""

_NO_FULL_COLLECTIONS = 1 << 30
"""A generation-2 threshold no load ever reaches."""

_lock = threading.Lock()
_loads = 0
_thresholds: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def full_collections_paused() -> Iterator[None]:
    """No automatic full collection while the body runs (nor while another load runs)."""
    global _loads, _thresholds
    with _lock:
        if _loads == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], _NO_FULL_COLLECTIONS)
        _loads += 1
    try:
        yield
    finally:
        with _lock:
            _loads -= 1
            if _loads == 0:
                gc.set_threshold(*_thresholds)


def settle(loaded_items: int) -> None:
    """After a load: freeze what is alive out of later full collections if the load was big."""
    if loaded_items >= FREEZE_MIN_ITEMS:
        gc.collect(1)  # young garbage only: milliseconds, not a scan of the whole heap
        gc.freeze()
