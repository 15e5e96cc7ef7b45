"""Reminders in PostgreSQL: one row per reminder in `reminders`, each user's time zone in
`reminder_timezones`. The same promises as the JSON book (`ReminderStore`,
`bot/reminders/book.py`), for every process on the database at once.

A row keeps the whole `Reminder` as JSON, beside the columns the queries need (`due_at`, the
chat, the setter, whether a stop interrupted its delivery). Each change is one statement (or
one transaction), so a delivery's marks (`firing`, then the receipt) are on the database
before the next step, as they are on disk with files.

**Who delivers.** The scheduler runs in every process, but only the one holding
`ReminderLease`, a session-level advisory lock on a connection of its own, delivers. The
others ask for the lock every `check_seconds`; when the holder dies (even by `kill -9`) its
connection closes, PostgreSQL releases the lock, and the next to ask takes over: it records
what the dead one delivered but did not record, and sends again what it had marked `firing`,
as a restart does with files. One lock instead of claiming each reminder: the delivery marks
stay exactly as they are with files, and no lease per reminder has to outlast a delivery
that waits behind a long turn. The holder checks its connection each time it looks; one
that broke (the database restarted) stops it delivering until it holds the lock again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection
from pydantic import ValidationError

from bot.adapters.postgres.database import Database, DatabaseDown
from bot.reminders.book import kept_after_update
from bot.reminders.model import Reminder, TooManyReminders

log = logging.getLogger(__name__)

STORE = "reminders"
DELIVERY_LOCK = 0x72656D696E64  # "remind": held by the one process that delivers
ADD_LOCK_CLASS = 0x726D6E64  # with a user's hash: their count and add are one step
LEASE_CHECK_SECONDS = 5.0
"""How often a process asks for the delivery lock (the takeover time after a holder dies),
and how often the holder looks for reminders other processes added."""
LEASE_LOOK_SECONDS = 3.0
"""A lock query that takes longer counts as a lost connection."""

_COLUMNS = "id, user_id, session_key, next_at, due_at, interrupted, reminder"


class PostgresReminderBook:
    """`ReminderStore` on PostgreSQL. A database that cannot be reached raises
    `ConnectionError` (an `OSError`, as a disk that refuses a write does with files)."""

    label = "reminders and your time zone"

    def __init__(self, database: Database) -> None:
        self._database = database
        self._unreadable: set[str] = set()

    # -- reading -----------------------------------------------------------------------------
    async def all(self) -> list[Reminder]:
        return await self._reminders("SELECT reminder FROM reminders ORDER BY id", ())

    async def get(self, reminder_id: str) -> Reminder | None:
        found = await self._reminders(
            "SELECT reminder FROM reminders WHERE id = %s", (reminder_id,)
        )
        return found[0] if found else None

    async def in_chat(self, session_key: str) -> list[Reminder]:
        return await self._reminders(
            "SELECT reminder FROM reminders WHERE session_key = %s AND next_at IS NOT NULL "
            "ORDER BY next_at",
            (session_key,),
        )

    async def soonest(self, limit: int) -> list[Reminder]:
        return await self._reminders(
            "SELECT reminder FROM reminders WHERE due_at IS NOT NULL ORDER BY due_at LIMIT %s",
            (limit,),
        )

    async def interrupted(self) -> list[Reminder]:
        return await self._reminders("SELECT reminder FROM reminders WHERE interrupted", ())

    async def timezone_of(self, user_id: str) -> str | None:
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT zone FROM reminder_timezones WHERE user_id = %s", (user_id,)
            )
            row = await cursor.fetchone()
        return str(row[0]) if row else None

    async def new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(3)
            if await self.get(candidate) is None:
                return candidate

    # -- changing ----------------------------------------------------------------------------
    async def add(self, reminder: Reminder, limit: int) -> None:
        async with self._connection() as connection, connection.transaction():
            await connection.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (ADD_LOCK_CLASS, reminder.user_id)
            )
            cursor = await connection.execute(
                "SELECT count(*) FROM reminders WHERE user_id = %s AND next_at IS NOT NULL",
                (reminder.user_id,),
            )
            row = await cursor.fetchone()
            count = int(row[0]) if row else 0
            if count >= limit:
                raise TooManyReminders(count)
            await connection.execute(
                f"INSERT INTO reminders ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb)",
                _row(reminder),
            )

    async def update(self, reminder: Reminder) -> bool:
        async with self._connection() as connection:
            if kept_after_update(reminder):
                cursor = await connection.execute(
                    "UPDATE reminders SET next_at = %s, due_at = %s, interrupted = %s, "
                    "reminder = %s::jsonb WHERE id = %s",
                    (*_row(reminder)[3:], reminder.id),
                )
            else:
                cursor = await connection.execute(
                    "DELETE FROM reminders WHERE id = %s", (reminder.id,)
                )
            return cursor.rowcount > 0

    async def remove(self, reminder_id: str) -> Reminder | None:
        found = await self._reminders(
            "DELETE FROM reminders WHERE id = %s RETURNING reminder", (reminder_id,)
        )
        return found[0] if found else None

    async def set_timezone(self, user_id: str, zone: str) -> None:
        async with self._connection() as connection:
            await connection.execute(
                "INSERT INTO reminder_timezones (user_id, zone) VALUES (%s, %s) "
                "ON CONFLICT (user_id) DO UPDATE SET zone = EXCLUDED.zone",
                (user_id, zone),
            )

    # -- UserMemoryStore ----------------------------------------------------------------------
    async def count_for(self, user_id: str) -> int:
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT (SELECT count(*) FROM reminders WHERE user_id = %s) "
                "+ (SELECT count(*) FROM reminder_timezones WHERE user_id = %s)",
                (user_id, user_id),
            )
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def forget_user(self, user_id: str) -> int:
        async with self._connection() as connection, connection.transaction():
            reminders = await connection.execute(
                "DELETE FROM reminders WHERE user_id = %s", (user_id,)
            )
            zones = await connection.execute(
                "DELETE FROM reminder_timezones WHERE user_id = %s", (user_id,)
            )
            return reminders.rowcount + zones.rowcount

    # -- the database ------------------------------------------------------------------------
    async def _reminders(self, query: str, params: tuple[Any, ...]) -> list[Reminder]:
        async with self._connection() as connection:
            cursor = await connection.execute(query.encode(), params)
            rows = await cursor.fetchall()
        return [r for r in (self._readable(row[0]) for row in rows) if r is not None]

    def _readable(self, raw: object) -> Reminder | None:
        """A stored reminder; None, with one log line per row, for one this version cannot
        read (it stays in the table, out of the way, as a damaged file is moved aside)."""
        try:
            return Reminder.model_validate(raw)
        except ValidationError as exc:
            where = raw.get("id", "?") if isinstance(raw, dict) else "?"
            if where not in self._unreadable:
                self._unreadable.add(where)
                log.error("[Reminders] reminder %s in the database is unreadable: %s", where, exc)
            return None

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self._database.connection(STORE) as connection:
                yield connection
        except DatabaseDown as exc:
            raise ConnectionError("the database cannot be reached") from exc


def _row(reminder: Reminder) -> tuple[object, ...]:
    """The columns of `_COLUMNS`, in order."""
    interrupted = reminder.firing is not None or reminder.unrecorded is not None
    return (
        reminder.id,
        reminder.user_id,
        reminder.session_key,
        reminder.next_at,
        reminder.due_at,
        interrupted,
        reminder.model_dump_json(),
    )


class ReminderLease:
    """`DeliveryLease` on PostgreSQL: a session advisory lock on a connection of its own (not
    the pool's: the lock lives exactly as long as this connection)."""

    check_seconds = LEASE_CHECK_SECONDS

    def __init__(self, url: str, check_seconds: float = LEASE_CHECK_SECONDS) -> None:
        self._url = url
        self.check_seconds = check_seconds
        self._connection: AsyncConnection | None = None
        self._holding = False

    async def held(self) -> bool:
        try:
            async with asyncio.timeout(LEASE_LOOK_SECONDS):
                return await self._look()
        except (psycopg.Error, OSError, TimeoutError) as exc:
            if self._holding:
                log.error("[Reminders] lost the database lock of the deliverer: %s", exc)
            await self.release()
            return False

    async def release(self) -> None:
        connection, self._connection, self._holding = self._connection, None, False
        if connection is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await connection.close()  # the lock goes with the session

    async def _look(self) -> bool:
        if self._connection is None or self._connection.closed:
            self._holding = False
            self._connection = await AsyncConnection.connect(
                self._url, autocommit=True, connect_timeout=max(1, round(LEASE_LOOK_SECONDS))
            )
        if self._holding:  # still ours while the session lives
            await self._connection.execute("SELECT 1")
            return True
        cursor = await self._connection.execute("SELECT pg_try_advisory_lock(%s)", (DELIVERY_LOCK,))
        row = await cursor.fetchone()
        self._holding = bool(row and row[0])
        if self._holding:
            log.info("[Reminders] this process delivers the reminders")
        return self._holding
