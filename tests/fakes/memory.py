"""Memory in memory, for unit tests of its consumers: recording fakes of `bot/ports/memory.py`."""

from __future__ import annotations

import asyncio

from bot.config.model import MemoryConfig
from bot.conversation import Speaker


class RecordingMemory:
    """`MemoryRecall` and `ExchangeMemory`: recalls `pack` (or fails), and keeps what it was
    asked and given. Storing never finishes, like a disk that hangs, so a caller that waited
    for it would hang too."""

    def __init__(self, pack: str = "", fail: bool = False) -> None:
        self.pack, self.fail = pack, fail
        self.recalled: list[tuple[str, str, MemoryConfig]] = []
        """(owner, message, the config it was asked with) of every recall."""
        self.stored: list[dict] = []
        """The arguments of every `remember_in_background`, by name."""

    async def recall(self, user_id: str, query: str, config: MemoryConfig) -> str:
        self.recalled.append((user_id, query, config))
        if self.fail:
            raise RuntimeError("memory broke")
        return self.pack

    def remember_in_background(
        self,
        user_id: str,
        user_text: str,
        assistant_text: str | None,
        source: str,
        with_rules: bool = True,
        speaker: Speaker | None = None,
        *,
        config: MemoryConfig,
    ) -> object:
        if self.fail:
            raise OSError("disk full")
        self.stored.append(
            dict(
                owner=user_id,
                said=user_text,
                answer=assistant_text,
                source=source,
                with_rules=with_rules,
                speaker=speaker,
                config=config,
            )
        )
        return asyncio.get_running_loop().create_future()


class RecordingExtraction:
    """`FactExtraction`: keeps what was submitted."""

    def __init__(self) -> None:
        self.submitted: list[tuple[str, str]] = []

    def submit(self, user_id: str, user_text: str, source: str) -> None:
        self.submitted.append((user_id, user_text))


class FakeDocuments:
    """A `UserMemoryStore` besides short-term memory, as the LightRAG documents are; fails
    to forget while `fail`."""

    label = "long-term documents (LightRAG)"

    def __init__(self, counts: dict[str, int] | None = None, fail: bool = False) -> None:
        self.counts, self.fail = dict(counts or {}), fail
        self.forgotten: list[str] = []

    async def count_for(self, user_id: str) -> int:
        return self.counts.get(user_id, 0)

    async def forget_user(self, user_id: str) -> int:
        if self.fail:
            raise ConnectionError("LightRAG down")
        self.forgotten.append(user_id)
        return self.counts.pop(user_id, 0)
