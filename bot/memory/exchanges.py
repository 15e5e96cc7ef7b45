"""Storing an exchange in short-term memory, the same way over either store: the items
`items_from_exchange` finds, added in the background so the reply never waits for a write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from bot.config.model import MemoryConfig
from bot.conversation import Speaker
from bot.memory.documents import batches
from bot.memory.episodes import items_from_exchange
from bot.memory.model import MemoryItem

log = logging.getLogger(__name__)


class RemembersExchanges:
    """`ExchangeMemory` for a memory that can `add` items (`MemoryService`)."""

    _config: Callable[[], MemoryConfig]
    _clock: Callable[[], datetime]

    def __init__(self) -> None:
        self._background: set[asyncio.Task[object]] = set()

    async def add(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        raise NotImplementedError

    def remember_in_background(
        self,
        user_id: str,
        user_text: str,
        assistant_text: str | None,
        source: str,
        with_rules: bool = True,
        speaker: Speaker | None = None,
        *,
        config: MemoryConfig | None = None,
    ) -> asyncio.Task[object]:
        """Store what the exchange holds without making the reply wait for the store."""
        task: asyncio.Task[object] = asyncio.create_task(
            self.remember_exchange(
                user_id, user_text, assistant_text, source, with_rules, speaker, config=config
            ),
            name=_background_name(user_id),
        )
        self._background.add(task)
        task.add_done_callback(self._background_done)
        return task

    async def remember_exchange(
        self,
        user_id: str,
        user_text: str,
        assistant_text: str | None,
        source: str,
        with_rules: bool = True,
        speaker: Speaker | None = None,
        *,
        config: MemoryConfig | None = None,
    ) -> list[MemoryItem]:
        """The exchange as an episode and, `with_rules`, the facts the rules find in it.

        `user_id` is the memory's owner (a user, or a group); `speaker`, in a group, is the
        member who said it, and the items name them. `config` is the turn's snapshot; None
        (outside a turn) takes the config as it is now."""
        config = config or self._config()
        new = items_from_exchange(
            user_text,
            assistant_text,
            source,
            self._clock(),
            config.episodic_ttl_days,
            with_rules,
            speaker,
        )
        return await self.add(user_id, new, config) if new else []

    async def keep_parts(self, user_id: str, parts: list[MemoryItem]) -> int:
        """Store a shared document's parts (`bot/memory/documents.py`) in batches; returns how
        many were stored. It runs as one of the user's background writes: `/forget all` waits
        for it rather than racing it, and a turn stopped meanwhile does not cut it short."""
        task: asyncio.Task[object] = asyncio.create_task(
            self._add_in_batches(user_id, parts), name=_background_name(user_id)
        )
        self._background.add(task)
        task.add_done_callback(self._background_done)
        stored = await asyncio.shield(task)
        assert isinstance(stored, int)
        return stored

    async def _add_in_batches(self, user_id: str, parts: list[MemoryItem]) -> int:
        stored = 0
        for batch in batches(parts):
            stored += len(await self.add(user_id, batch))
            await asyncio.sleep(0)  # other chats' turns between two writes
        return stored

    async def _exchanges_stored(self, user_id: str) -> None:
        """Let this user's exchanges still being stored finish (before forgetting them all,
        so that the last thing said before "forget everything" does not outlive it)."""
        name = _background_name(user_id)
        pending = [task for task in self._background if task.get_name() == name]
        await asyncio.gather(*pending, return_exceptions=True)

    def _background_done(self, task: asyncio.Task[object]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("[Memory] storing an exchange failed: %s", task.exception())


def _background_name(user_id: str) -> str:
    return f"memory-write:{user_id}"
