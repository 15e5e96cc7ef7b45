"""PTB update processing with per-chat order: one update of a chat at a time, chats in parallel.

PTB's `concurrent_updates` runs each update as its own task. Those tasks start in arrival
order and reach `do_process_update` without yielding (PTB's semaphore is FIFO too), where the
update takes its place in its chat's lane before anything is awaited. So the updates of one
chat are handled in the order Telegram delivered them, while a slow turn in one chat never
holds up another. Commands have a lane of their own (`ChatLanes`): `/stop` does not wait
for the answer it stops, and a message sent after a command waits for it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.ext import BaseUpdateProcessor

from bot.adapters.telegram.inbound import chat_key, is_command_update
from bot.chat_locks import ChatLanes

DEFAULT_MAX_CONCURRENT_UPDATES = 1024
"""Updates in progress or queued behind their chat; the rest wait in PTB's update queue."""


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Serialises updates per chat (and forum topic), commands apart from messages; different
    chats run concurrently."""

    def __init__(
        self,
        max_concurrent_updates: int = DEFAULT_MAX_CONCURRENT_UPDATES,
        key_of: Callable[[object], str | None] = chat_key,
        on_done: Callable[[object], Awaitable[None]] | None = None,
        is_command: Callable[[object], bool] = is_command_update,
    ) -> None:
        super().__init__(max_concurrent_updates)
        self._key_of = key_of
        self._is_command = is_command
        self.on_done = on_done
        """Awaited when an update has been handled to the end (not when it was cancelled),
        before its lane lets the chat's next update in."""
        self._lanes = ChatLanes()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def in_progress(self) -> int:
        """Updates being handled or waiting for their chat."""
        return len(self._tasks)

    def cancel_all(self) -> int:
        """Cancel every update still in progress (shutdown after the grace period)."""
        for task in self._tasks:
            task.cancel()
        return len(self._tasks)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        started = False
        try:
            key = self._key_of(update)
            if key is None:
                started = True
                await coroutine
                await self._finish(update)
            else:
                lane = self._lanes.command if self._is_command(update) else self._lanes.turn
                async with lane(key):
                    started = True
                    await coroutine
                    await self._finish(update)
        finally:
            self._tasks.discard(task)
            if not started and inspect.iscoroutine(coroutine):
                coroutine.close()  # cancelled while queued: never run, so never awaited

    async def _finish(self, update: object) -> None:
        if self.on_done is not None:
            await self.on_done(update)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release; `cancel_all` is the caller's decision."""
