"""Long-term memory (LightRAG) as context building sees it (filled in by the RAG issue)."""

from __future__ import annotations

from typing import Protocol


class RagPort(Protocol):
    async def query(self, text: str, mode: str, owner: str) -> str:
        """Context relevant to `text` from `owner`'s past conversations; empty when unavailable."""
        ...
