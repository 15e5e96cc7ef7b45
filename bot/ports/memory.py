"""Short-term structured memory as context building and the `memory` tool see it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.memory.items import ItemType, MemoryItem
    from bot.memory.scoring import ScoredItem


class MemoryPort(Protocol):
    async def recall(self, user_id: str, query: str) -> str:
        """The `# Memory` pack for this user and message; empty when there is nothing."""
        ...


class MemoryItemsPort(Protocol):
    """One user's items, to add, search and forget one by one (the `memory` tool)."""

    @property
    def enabled(self) -> bool:
        """False while the operator has turned memory off (`memory.enabled`)."""
        ...

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]: ...

    async def add(self, user_id: str, new_items: list[MemoryItem]) -> list[MemoryItem]:
        """Store the items (merged into kept ones they repeat); returns them as stored."""
        ...

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user; None when the user has no such item."""
        ...


class RememberingPreference(Protocol):
    def is_remembering(self, user_id: str) -> bool:
        """False while the user has said `/remember off`; cheap enough to ask every turn."""
        ...


class ExtractionTarget(Protocol):
    """Where LLM fact extraction reads a user's items and applies its ADD / UPDATE / DELETE."""

    async def nearest(self, user_id: str, text: str, limit: int) -> list[MemoryItem]:
        """Up to `limit` facts and how-tos of this user that `text` may confirm or contradict."""
        ...

    async def add(self, user_id: str, new_items: list[MemoryItem]) -> list[MemoryItem]:
        """Store the items (merged into kept ones they repeat); returns them as stored."""
        ...

    async def replace(
        self, user_id: str, item_id: str, item_type: ItemType, content: str
    ) -> MemoryItem | None:
        """Give one item new wording and type under the same id; None when there is no such item."""
        ...

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user; None when the user has no such item."""
        ...


class PendingExtraction(Protocol):
    """Messages waiting for LLM fact extraction: dropped before a user's memory is forgotten
    or remembering is turned off, so that nothing they said comes back afterwards."""

    async def discard(self, user_id: str) -> None: ...
