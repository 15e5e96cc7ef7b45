"""What commands need of the turn a chat is running: who asked for it, and a way to stop it."""

from __future__ import annotations

from typing import Protocol


class TurnStopper(Protocol):
    def asked_by(self, key: str) -> str | None:
        """Who asked for the turn running in chat `key`; None when none runs."""
        ...

    async def stop(self, key: str) -> bool:
        """Stop the turn running in chat `key` and wait until its session is saved; False
        when there was nothing to stop."""
        ...
