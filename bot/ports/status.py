"""Lines a component adds to `/status` (health of optional services, queue depths)."""

from __future__ import annotations

from typing import Protocol


class StatusProvider(Protocol):
    async def status_lines(self, user_id: str) -> list[str]:
        """Short human-readable lines; must not block for long or reveal secrets."""
        ...
