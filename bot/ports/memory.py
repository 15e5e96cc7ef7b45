"""Short-term structured memory as context building and the `memory` tool see it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.memory.items import MemoryItem
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
