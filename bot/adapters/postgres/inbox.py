"""The Telegram inbox in PostgreSQL: one journal for any number of processes on one token.

Each update is one row, keyed by its `update_id`: whichever process receives it (a webhook
post behind any load balancer, or the one poller) inserts it, and a second insert of the
same id is a no-op, so Telegram sending it again, to this process or another, never makes
a second turn. Only then is Telegram told (the webhook's 200, the next getUpdates).

A chat's updates are handed out by the one process that holds the chat's advisory lock, in
`update_id` order (`chat_owners.py`: receiving, letting go, takeover). An update is marked
done (its words dropped) before its chat's next turn, and before the lock is let go, so no
process ever hands it out again. A database that cannot be reached makes `take` fail: the
webhook answers 503 and Telegram posts again later; polling fetches again.

What each process still does alone: strangers' updates (never written, but their id, so a
repeat is recognised) are answered by whichever process received them. Reminders are not
this inbox's: one process delivers them (`ReminderLease`, bot/adapters/postgres/reminders.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import AsyncConnection

from bot.adapters.postgres.chat_owners import (
    CHANNEL,
    LOCKS,
    STORE,
    SWEEP_SECONDS,
    ChatOwners,
    TurnState,
    slot_of,
)
from bot.adapters.postgres.database import Database, DatabaseDown
from bot.ports.inbox import Deliver

log = logging.getLogger(__name__)

__all__ = ["LOCKS", "SWEEP_SECONDS", "PostgresUpdateInbox", "slot_of"]

KEEP_DONE_SECONDS = 2 * 24 * 3600
"""How long a handled update's id is kept, to recognise a repeat (Telegram keeps an update
for 24 h at most)."""


class PostgresUpdateInbox:
    """`TelegramInbox` (and a `UserMemoryStore`) on PostgreSQL, shared by processes."""

    label = "received Telegram messages kept in the database"

    def __init__(
        self,
        database: Database,
        keep: Callable[[dict[str, Any]], bool],
        chat_of: Callable[[dict[str, Any]], str],
        sender_of: Callable[[dict[str, Any]], str | None],
        sweep_seconds: float = SWEEP_SECONDS,
    ) -> None:
        """`keep`: which updates are written (allowed users'); `chat_of`, `sender_of`: an
        update's chat and author (the channel's reading of its JSON)."""
        self._database = database
        self._keep = keep
        self._chat_of = chat_of
        self._sender_of = sender_of
        self.last_update_id = 0
        self._deliver: Deliver | None = None
        self._journal_connection: AsyncConnection | None = None  # the receivers' inserts
        self._journaling = asyncio.Lock()
        self._handed: dict[int, TurnState] = {}  # update id -> its turn, while handed out
        self._owners = ChatOwners(
            database, self._handed, self._journaled_here, self._prune, sweep_seconds
        )

    # -- journal ----------------------------------------------------------------------------
    def depth(self) -> int:
        """Updates waiting in every process, as of the last sweep."""
        return self._owners.waiting

    async def take(self, updates: list[dict[str, Any]]) -> None:
        """Insert the batch (a repeat is a no-op) and notify every process; then claim the
        chats of the new updates, or leave them to their owners. Raises `DatabaseDown` (tried
        even while turns rest after a failure: the first post that gets through ends it)."""
        if not updates:
            return
        rows = [self._row(update) for update in updates]
        fresh = await self._journal(rows)
        self.last_update_id = max([self.last_update_id, *(r[0] for r in rows)])
        slots: list[int] = []
        for update, (update_id, slot, _, body, _) in zip(updates, rows, strict=True):
            if update_id not in fresh:
                continue  # Telegram sent it again
            if body is None:  # a stranger's: answered here, nothing of it kept
                if self._deliver is not None:
                    await self._deliver(update)
            elif slot not in slots:
                slots.append(slot)
        if slots:  # Telegram need not wait for this: the updates are safe in the table
            self._owners.claim(slots)

    async def _journal(self, rows: list[tuple[int, int, str | None, str | None, bool]]) -> set[int]:
        """Insert the rows on the receivers' own connection, one batch at a time (Telegram
        posts one at a time anyway), so a post never waits for the turns' pooled
        connections; the ids that were new. Raises `DatabaseDown`."""
        async with self._journaling:
            try:
                if self._journal_connection is None or self._journal_connection.closed:
                    self._journal_connection = await self._database.dedicated()
                cursor = await self._journal_connection.execute(
                    "WITH fresh AS ("
                    " INSERT INTO telegram_inbox (update_id, slot, sender, body, done)"
                    " SELECT * FROM unnest(%s::bigint[], %s::integer[], %s::text[], %s::text[],"
                    " %s::boolean[]) ON CONFLICT (update_id) DO NOTHING RETURNING update_id, slot)"
                    " SELECT update_id, pg_notify(%s, slot::text) FROM fresh",
                    (*map(list, zip(*rows, strict=True)), CHANNEL),
                )
                fresh = {row[0] for row in await cursor.fetchall()}
            except psycopg.OperationalError as exc:
                self._database.health.failed(STORE, exc)
                raise DatabaseDown(STORE) from exc
        self._database.health.worked()
        return fresh

    def _row(self, update: dict[str, Any]) -> tuple[int, int, str | None, str | None, bool]:
        kept = self._keep(update)
        return (
            int(update["update_id"]),
            slot_of(self._chat_of(update)),
            self._sender_of(update) if kept else None,
            json.dumps(update) if kept else None,  # ASCII: half an emoji has a JSON escape
            not kept,
        )

    async def count_start(self, update_id: int) -> int:
        state = self._handed.get(update_id)
        if state is None:
            return 0
        try:
            async with self._database.connection(STORE, retry=True) as connection:
                cursor = await connection.execute(
                    "UPDATE telegram_inbox SET starts = starts + 1"
                    " WHERE update_id = %s AND NOT done RETURNING starts",
                    (update_id,),
                )
                row = await cursor.fetchone()
        except Exception as exc:  # the message is still answered; only a replay would not know
            log.warning("[Telegram] could not count the start of update %d: %s", update_id, exc)
            row = (state.starts + 1,)
        state.starts = row[0] if row else 0
        return state.starts

    def preview_shown(self, update_id: int, message_ids: list[int]) -> None:
        state = self._handed.get(update_id)
        if state is None or state.preview == message_ids:
            return
        state.preview = list(message_ids)
        self._note(
            state, "UPDATE telegram_inbox SET preview = %s WHERE update_id = %s",
            (list(message_ids), update_id),
        )  # fmt: skip

    def answered(self, update_id: int, reply: str) -> None:
        state = self._handed.get(update_id)
        if state is None:
            return
        state.answer = reply
        self._note(
            state, "UPDATE telegram_inbox SET answer = %s WHERE update_id = %s", (reply, update_id)
        )

    def answer_of(self, update_id: int) -> str | None:
        state = self._handed.get(update_id)
        return state.answer if state is not None else None

    def leftover_preview(self, update_id: int) -> list[int]:
        state = self._handed.get(update_id)
        return list(state.preview) if state is not None else []

    async def finished(self, update_id: int) -> None:
        """Mark it done (its words dropped), after its notes; then its chat's owner looks
        for more, or lets the chat go."""
        state = self._handed.get(update_id)
        if state is not None and state.writes is not None:
            with contextlib.suppress(Exception):  # logged where it failed
                await state.writes
        try:
            async with self._database.connection(STORE, retry=True) as connection:
                await connection.execute(
                    "UPDATE telegram_inbox SET done = true, body = NULL, answer = NULL,"
                    " preview = '{}' WHERE update_id = %s",
                    (update_id,),
                )
        except Exception as exc:  # handed out again, and recognised by its session
            log.warning("[Telegram] could not mark update %d done: %s", update_id, exc)
        self._handed.pop(update_id, None)
        if state is not None:
            self._owners.tell(state.slot, news=False)

    def _note(self, state: TurnState, query: str, params: tuple[Any, ...]) -> None:
        """Write a turn's note in the background, after the notes before it."""
        earlier = state.writes

        async def write() -> None:
            if earlier is not None:
                with contextlib.suppress(Exception):
                    await earlier
            try:
                async with self._database.connection(STORE) as connection:
                    await connection.execute(query.encode(), params)
            except Exception as exc:  # at worst a replay does not know of it
                log.warning("[Telegram] could not note a turn's progress in the inbox: %s", exc)

        state.writes = asyncio.create_task(write())

    # -- opening and closing ------------------------------------------------------------------
    async def open(self, deliver: Deliver) -> None:
        """Hand out updates to `deliver` from now on: the chats this process holds or takes
        over (`ChatOwners.open`), and strangers' updates as they are received."""
        self._deliver = deliver
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute("SELECT max(update_id) FROM telegram_inbox")
            row = await cursor.fetchone()
        self.last_update_id = int(row[0]) if row and row[0] is not None else 0
        await self._owners.open(deliver)

    async def close(self) -> None:
        """Stop handing out, write the turns' notes still on their way, and let every chat
        go (closing the connection drops the locks)."""
        self._deliver = None
        self._owners.stop_handing_out()
        for state in list(self._handed.values()):
            if state.writes is not None:
                with contextlib.suppress(Exception):
                    await state.writes
        await self._owners.close()
        if self._journal_connection is not None:
            with contextlib.suppress(Exception):
                await self._journal_connection.close()
        self._journal_connection = None

    def _journaled_here(self, backend_pid: int) -> bool:
        """True for a notification of this process's own insert: `take` has told the chat's
        worker already, and a second look would only read the same rows again."""
        journal = self._journal_connection
        return (
            journal is not None and not journal.closed and journal.info.backend_pid == backend_pid
        )

    async def _prune(self) -> None:
        """Forget the ids of long-handled updates (never the newest: polling resumes after it)."""
        async with self._database.connection(STORE, retry=True) as connection:
            await connection.execute(
                "DELETE FROM telegram_inbox WHERE done"
                " AND received_at < now() - make_interval(secs => %s)"
                " AND update_id < (SELECT max(update_id) FROM telegram_inbox)",
                (KEEP_DONE_SECONDS,),
            )

    # -- /memory and /forget all ------------------------------------------------------------
    async def count_for(self, user_id: str) -> int:
        """The user's handled updates whose words are still kept (none: `finished` drops
        them; an update still waiting is its turn's, kept until the turn is over)."""
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "SELECT count(*) FROM telegram_inbox WHERE sender = %s AND done"
                " AND body IS NOT NULL",
                (user_id,),
            )
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def forget_user(self, user_id: str) -> int:
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "UPDATE telegram_inbox SET body = NULL, answer = NULL WHERE sender = %s"
                " AND done AND body IS NOT NULL",
                (user_id,),
            )
            return cursor.rowcount
