"""Process-wide policies, in one place: what the garbage collector does while memory loads, how
memory is allocated, and how loud third-party libraries' loggers are. `python -m bot` calls
`apply_process_policies` once logging is set up; tests and benchmarks that run the bot
in-process call it the same way. Nothing else in the bot changes process-wide state.

Garbage collection while a heavy user's memory loads (`full_collections_paused`, `settle`,
used by `bot/memory/service.py`):

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

Allocation (`small_memory`): two defaults of the C libraries kept freed memory resident. glibc
gives each thread that allocates under contention an arena of its own (up to 8 per core) and,
once a large block is freed, raises the size from which blocks are mapped apart to it (up to
32 MB): the worker threads that load users' memory left freed temporaries in arenas that are
never given back. numpy asks the kernel for huge pages (2 MB) for every array of 4 MB or more,
so a partly used region is resident whole. With two arenas, a fixed 128 kB threshold
(`mallopt`) and no huge pages for numpy (`NUMPY_MADVISE_HUGEPAGE=0`, read when numpy is
imported: `python -m bot` applies the policies before it imports the app), the bot of
`bench/memory_load.py` with 20 users of 10k items held 744 MB instead of 888 MB, at the same
CPU per message. Both are skipped where they do not apply (not glibc; numpy imported already).

Third-party loggers (`quiet_libraries`): request URLs at INFO are noise (and, for Telegram,
carry the token); python-telegram-bot logs whole updates at DEBUG, strangers' messages
included; psycopg's pool logs each failed reconnection, and psycopg logs a second "error
ignored" warning when a server going away interrupts a batch's clean-up. The bot's own
`[Database]` line says each outage once instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import sys
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


NOISY_AT_INFO = ("httpx", "httpx2", "httpcore", "openai", "telegram.ext.Updater")
"""Libraries whose INFO lines are request URLs: kept to warnings."""


M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
"""glibc's `mallopt` parameters (malloc.h)."""
ARENAS = 2
MMAP_THRESHOLD_BYTES = 128 * 1024
"""glibc's own initial threshold, kept fixed rather than raised by each large free."""


def apply_process_policies() -> None:
    """Every process-wide policy of the bot; call once logging is set up (`setup_logging`)."""
    quiet_libraries()
    small_memory()


def small_memory() -> bool:
    """Freed memory goes back to the system (see the module docstring); True when glibc took
    the settings. Call before the bot's threads start and before numpy is imported."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, ARENAS)) and bool(
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    )


def quiet_libraries() -> None:
    """Third-party loggers at the levels the bot runs them at; calling it again changes nothing."""
    for noisy in NOISY_AT_INFO:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    root_level = logging.getLogger().getEffectiveLevel()
    logging.getLogger("telegram").setLevel(max(logging.INFO, root_level))
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    for name in ("psycopg", "psycopg.transaction"):  # a logger's filter sees only its own records
        psycopg_logger = logging.getLogger(name)
        if not any(isinstance(f, _CleanupAfterAnError) for f in psycopg_logger.filters):
            psycopg_logger.addFilter(_CleanupAfterAnError())


class _CleanupAfterAnError(logging.Filter):
    """Drops psycopg's "error ignored ..." warnings: a batch (a pipeline) or a transaction
    that the server's going away interrupts fails its clean-up too, and psycopg logs that
    second error while the first goes on to the caller, which `Database.connection` turns
    into the outage's one line (`DatabaseHealth.failed`). Any other psycopg record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored")
