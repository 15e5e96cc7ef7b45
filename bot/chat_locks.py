"""One turn at a time per chat, in arrival order; different chats run concurrently.

Commands have a lane of their own (`ChatLanes`), so they never wait behind a turn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager


class ChatLocks:
    """A FIFO lock per key, created on first use and dropped when nobody holds or awaits it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key]
                del self._locks[key]

    def busy(self, key: str) -> bool:
        """Whether someone holds `key`'s lock or waits for it."""
        return key in self._locks

    def __len__(self) -> int:
        return len(self._locks)


class ChatLanes:
    """Per chat, two lanes: messages and commands, each one at a time in arrival order.

    A command never waits behind a message's turn (so `/stop` can stop it and `/status`
    answers at once), but a message waits for the commands sent before it (so a message sent
    after `/new` lands in the fresh conversation).
    """

    def __init__(self) -> None:
        self._turns = ChatLocks()
        self._commands = ChatLocks()

    @asynccontextmanager
    async def turn(self, key: str) -> AsyncIterator[None]:
        async with self._turns.hold(key):
            async with self._commands.hold(key):
                pass  # every command that came before has finished
            yield

    def command(self, key: str) -> AbstractAsyncContextManager[None]:
        return self._commands.hold(key)

    def __len__(self) -> int:
        """Chats with a turn or a command running or waiting."""
        return len(self._turns) + len(self._commands)
