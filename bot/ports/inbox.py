"""The Telegram inbox as the channel uses it: updates journaled before Telegram forgets them,
handed to the channel to handle, and marked done once handled.

Two stores implement it: `UpdateInbox` (`bot/adapters/telegram/inbox.py`, a file in the data
dir, one process) and `PostgresUpdateInbox` (`bot/adapters/postgres/inbox.py`, `DATABASE_URL`,
any number of processes on one token). Updates are raw JSON as Telegram sent it (a dict).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bot.ports.memory import UserMemoryStore

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
"""Where the inbox hands an update this process is to handle, in order per chat."""


class TelegramInbox(UserMemoryStore, Protocol):
    """Journal, hand out, remember a turn's progress, mark done.

    What is read during a turn (`answer_of`, `leftover_preview`) and what is noted while the
    reply streams (`preview_shown`, `answered`) is synchronous: the inbox keeps the state of
    the updates it handed out in memory, and a store that writes elsewhere writes those notes
    in the background, each update's in order, all of them before its `finished` returns."""

    last_update_id: int
    """The highest update id journaled: long polling resumes after it."""

    def depth(self) -> int:
        """Updates journaled and not handled yet (as far as this process knows)."""
        ...

    async def open(self, deliver: Deliver) -> None:
        """Start handing updates to `deliver`: first those left from before a stop (a
        restart's, or a dead process's), then each new one `take` journals."""
        ...

    async def close(self) -> None:
        """Stop handing out; call once the updates handed out are finished or cancelled."""
        ...

    async def take(self, updates: list[dict[str, Any]]) -> None:
        """Journal a batch, then hand on those that are new (a repeat is not handed out
        again). Returns once they are durable: only then may Telegram be told. Raises when
        they could not be journaled and must not be acknowledged."""
        ...

    async def count_start(self, update_id: int) -> int:
        """Count a start of the update's turn before it runs; how many it has had, this one
        included (0 for an update the inbox does not hold)."""
        ...

    def preview_shown(self, update_id: int, message_ids: list[int]) -> None:
        """The messages of the update's streamed reply shown so far ([] once final)."""
        ...

    def answered(self, update_id: int, reply: str) -> None:
        """The update's final reply went out: keep its text until the update is done."""
        ...

    def answer_of(self, update_id: int) -> str | None:
        """The reply a cut-short turn of this update had already delivered, if any."""
        ...

    def leftover_preview(self, update_id: int) -> list[int]:
        """Preview messages a cut-short turn of this update left behind."""
        ...

    async def finished(self, update_id: int) -> None:
        """The update was handled to the end: it is never handed out again."""
        ...
