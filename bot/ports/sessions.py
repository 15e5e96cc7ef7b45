"""Where sessions live between turns."""

from __future__ import annotations

from typing import Protocol

from bot.conversation import Session


class SessionStore(Protocol):
    async def load(self, key: str) -> Session:
        """The session for `key`, or a fresh one; never raises on a damaged file."""
        ...

    async def save(self, session: Session) -> None:
        """Persist atomically: a crash mid-write leaves the previous version intact."""
        ...

    async def archive(self, key: str) -> None:
        """Set the current session aside (kept on disk) so the next `load` starts fresh."""
        ...
