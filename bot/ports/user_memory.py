"""A store that keeps something about a user, as the memory commands see it.

`/memory` counts what each store holds for the asking user and `/forget all` empties every
one of them, so a new kind of memory (short-term items, LightRAG documents) joins those
commands by implementing this and being listed at the composition root.
"""

from __future__ import annotations

from typing import Protocol


class UserMemoryStore(Protocol):
    label: str
    """What the store holds, for people: "long-term documents (LightRAG)"."""

    async def count_for(self, user_id: str) -> int:
        """How many entries this user has here."""
        ...

    async def forget_user(self, user_id: str) -> int:
        """Delete everything of this user here; returns how many entries went."""
        ...
