"""Lines a component adds to `/status` (health of optional services, queue depths)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.conversation.scope import MemoryScope


class StatusProvider(Protocol):
    async def status_lines(self, scope: MemoryScope) -> list[str]:
        """Short human-readable lines for the asker (`scope.speaker_id`) in this chat's memory
        scope (`scope.owner`: a group shows the group's counts, never a member's); must not
        block for long, reveal secrets, or name the server's paths and hosts (those go in
        `operator_status_lines`)."""
        ...


@runtime_checkable
class OperatorStatusProvider(Protocol):
    """A `StatusProvider` with more to tell the people who run the bot."""

    async def operator_status_lines(self, scope: MemoryScope) -> list[str]:
        """`status_lines` with server details (addresses, paths); shown only to operators."""
        ...
