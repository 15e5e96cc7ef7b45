"""The order in which the app's parts start and stop, written once.

Each part is added with what starts it and what stops it; `start` runs the starts in the
order the parts were added, `aclose` the stops in reverse, on one `AsyncExitStack`: a part
added later may use every part added before it, while it runs and while it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from typing import Any

Hook = Callable[[], Awaitable[None]]


class Lifecycle:
    """The parts of one app, started in order and stopped in reverse.

    Every stop runs at `aclose`, started or not, since an app may be closed after a start
    that failed half-way (a database that cannot be reached): each stop does nothing for a
    part that never started. A stop that raises does not keep the others from running."""

    def __init__(self) -> None:
        self._starts: list[Hook] = []
        self._stops = AsyncExitStack()

    def add(self, start: Hook | None = None, stop: Hook | None = None) -> None:
        """A part started after the parts added before it, and stopped before them."""
        if start is not None:
            self._starts.append(start)
        if stop is not None:
            self._stops.push_async_callback(stop)

    def add_task(
        self, name: str, work: Callable[[], Coroutine[Any, Any, None]], then: Hook | None = None
    ) -> None:
        """Background `work` for as long as the app runs: cancelled at stop, then `then`."""
        task: asyncio.Task[None] | None = None

        async def start() -> None:
            nonlocal task
            task = asyncio.create_task(work(), name=name)

        async def stop() -> None:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if then is not None:
                await then()

        self.add(start, stop)

    async def start(self) -> None:
        for start in self._starts:
            await start()

    async def aclose(self) -> None:
        await self._stops.aclose()
