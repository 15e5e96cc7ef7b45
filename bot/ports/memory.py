"""Short-term structured memory as context building sees it (filled in by the memory issue)."""

from __future__ import annotations

from typing import Protocol


class MemoryPort(Protocol):
    async def recall(self, user_id: str, query: str) -> str:
        """The `# Memory` pack for this user and message; empty when there is nothing."""
        ...


class RememberingPreference(Protocol):
    def is_remembering(self, user_id: str) -> bool:
        """False while the user has said `/remember off`; cheap enough to ask every turn."""
        ...
