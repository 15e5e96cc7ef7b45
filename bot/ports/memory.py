"""Short-term structured memory as context building sees it (filled in by the memory issue)."""

from __future__ import annotations

from typing import Protocol


class MemoryPort(Protocol):
    async def recall(self, user_id: str, query: str) -> str:
        """The `# Memory` pack for this user and message; empty when there is nothing."""
        ...
