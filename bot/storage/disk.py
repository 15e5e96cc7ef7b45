"""When the disk refuses writes (full, over quota, read-only): keep going, say so, retry.

Stores report each refused write here with `failed` and each write that goes through with
`wrote`. The log gets one line when a store's writes start failing and one when they work
again, never one per attempt; `/status` shows the problem while it lasts. Stores that keep
what they could not write (a `Backlog`) are retried every `RETRY_SECONDS` by `run_retries`,
and on their own next write.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
from typing import Protocol

from bot.conversation.scope import MemoryScope
from bot.i18n.catalogue import notices as texts

log = logging.getLogger(__name__)

RETRY_SECONDS = 30.0
START = "data dir at start"
"""What `failed` is told when the data dir cannot be written at start (lock, folders)."""
_FULL = (errno.ENOSPC, errno.EDQUOT)


class Backlog(Protocol):
    """A store that keeps in memory what the disk refused, and writes it later."""

    unwritten_label: str
    """What it keeps, for `/status`: "session(s)"."""

    def unwritten(self) -> int:
        """How many items wait in memory for the disk."""
        ...

    async def retry_unwritten(self) -> None:
        """Try to write what waits; report the outcome to the `DiskHealth`."""
        ...


def describe(exc: OSError) -> str:
    """`No space left on device`: the reason without the path."""
    return exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))


class DiskHealth:
    """`StatusProvider` for the data dir's disk, and the retrier of what it refused."""

    def __init__(self) -> None:
        self._failing: dict[str, OSError] = {}
        self._backlogs: list[Backlog] = []

    @property
    def failing(self) -> bool:
        return bool(self._failing)

    def refused(self) -> str:
        """The stores whose last write was refused and why, e.g. `sessions (No space left on
        device)`; empty when every store writes."""
        return ", ".join(f"{what} ({describe(exc)})" for what, exc in self._failing.items())

    def unwritten(self) -> int:
        """Items waiting in memory for the disk, across the stores that keep them."""
        return sum(backlog.unwritten() for backlog in self._backlogs)

    def add_backlog(self, backlog: Backlog) -> None:
        self._backlogs.append(backlog)

    def failed(self, what: str, exc: OSError, kept: str = "kept in memory and retried") -> None:
        """A write of `what` was refused: logged once per episode, shown in `/status`."""
        if what not in self._failing:
            log.error("[Disk] could not write the %s (%s); %s", what, describe(exc), kept)
        self._failing[what] = exc

    def wrote(self, what: str) -> None:
        """A write of `what` went through: the disk has room again (start-up problems too)."""
        for name in (what, START):
            if self._failing.pop(name, None) is not None:
                log.info("[Disk] writing the %s works again", name)

    async def retry(self) -> None:
        for backlog in self._backlogs:
            if backlog.unwritten():
                await backlog.retry_unwritten()

    async def run_retries(self, every: float = RETRY_SECONDS) -> None:
        """Retry the backlogs for as long as the bot runs (a background task)."""
        while True:
            await asyncio.sleep(every)
            with contextlib.suppress(Exception):  # a store logs its own failures
                await self.retry()

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        if not self._failing:
            return []
        first = next(iter(self._failing.values()))
        waiting = [
            f"{b.unwritten()} {texts.backlog_name(b.unwritten_label)}"
            for b in self._backlogs
            if b.unwritten()
        ]
        full = first.errno in _FULL
        return [texts.disk_trouble(full, describe(first), ", ".join(waiting))]
