"""Sessions in PostgreSQL: one row per chat in `sessions`, `/new` moves it to
`archived_sessions`. The same promises as the JSON files (`bot/storage/sessions.py`).

Every row names the people whose words it may hold (`people`: the chat's id, its group's
memory scope, each author, each user in the summary), so `/memory` and `/forget all` read only
the rows of the asking user, through an index, never every chat's.

The database is the record: a load reads it, so another process's save is seen. While the
database cannot be reached a turn still answers: from the last copy this process saw (kept
for the `cache_size` most recent chats), else from a fresh session; its save waits in memory
(up to `max_unsaved` chats) and is written once the database is back. A session begun from
nothing while the database was away is appended to what the database holds by then, never
written over it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from psycopg import AsyncConnection, sql
from pydantic import ValidationError

from bot.adapters.postgres.database import Database, DatabaseDown
from bot.chat_locks import ChatLocks
from bot.conversation import Session, utc_now
from bot.conversation.scope import group_scope
from bot.storage.unsaved import UnsavedSessions

log = logging.getLogger(__name__)

STORE = "sessions"


class PostgresSessionStore:
    """`SessionStore` (and a `UserMemoryStore`) on PostgreSQL."""

    label = "messages in conversations (current and archived)"
    unwritten_label = "unsaved session(s)"

    def __init__(self, database: Database, cache_size: int = 512, max_unsaved: int = 1_000) -> None:
        self._database = database
        self._last_seen: OrderedDict[str, Session] = OrderedDict()
        self._cache_size = cache_size
        self._unsaved = UnsavedSessions(max_unsaved)
        self._unread: set[str] = set()
        self._writing = ChatLocks()  # one write of a session at a time, in save order
        database.health.add_backlog(self)

    async def load(self, key: str) -> Session:
        unsaved = self._unsaved.get(key)
        if unsaved is not None:  # the database has an older version than this
            return unsaved.session
        try:
            async with self._database.connection(STORE) as connection:
                cursor = await connection.execute(
                    "SELECT session FROM sessions WHERE key = %s", (key,)
                )
                row = await cursor.fetchone()
        except DatabaseDown:
            seen = self._last_seen.get(key)
            if seen is not None:
                return seen
            self._unread.add(key)
            return Session(key=key)
        self._unread.discard(key)
        session = _read(row[0], key) if row else Session(key=key)
        if session is None:  # set aside, as a damaged file is: kept, and out of the way
            await self.archive(key)
            session = Session(key=key)
        self._remember(session)
        return session

    async def save(self, session: Session) -> None:
        """Write `session`; while the database is away, keep it for a retry (no error)."""
        session.updated_at = utc_now()
        self._remember(session)
        self._unsaved.keep(session, partial=session.key in self._unread)
        if await self._write(session.key):
            await self.retry_unwritten()
        self._unsaved.bound()

    def unwritten(self) -> int:
        return len(self._unsaved)

    async def retry_unwritten(self) -> None:
        """Write the sessions the database refused. A chat whose write is under way is left
        to it: waiting for it would hold this turn up behind other chats' writes."""
        for key in self._unsaved.keys():
            if not self._writing.busy(key) and not await self._write(key, retry=True):
                return

    async def archive(self, key: str) -> None:
        """Move the chat's row to the archive; the next `load` starts fresh. While the
        database is away this fails (`DatabaseDown`) and the session stays as it is."""
        if self._unsaved.get(key) is not None and not await self._write(key, retry=True):
            raise DatabaseDown(STORE)  # the archive gets the session as it is now, or nothing
        async with self._database.connection(STORE) as connection:
            await connection.execute(
                "WITH gone AS (DELETE FROM sessions WHERE key = %s RETURNING *) "
                "INSERT INTO archived_sessions (key, session, people, archived_at) "
                "SELECT key, session, people, now() FROM gone",
                (key,),
            )
        self._last_seen.pop(key, None)
        self._unsaved.discard(key)

    async def count_for(self, user_id: str) -> int:
        """The user's messages in every session, archived ones too."""
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "SELECT key, session FROM sessions WHERE people @> ARRAY[%s] "
                "UNION ALL SELECT key, session FROM archived_sessions "
                "WHERE people @> ARRAY[%s]",
                (user_id, user_id),
            )
            rows = await cursor.fetchall()
        return sum(_parsed(text, key).count_of(user_id) for key, text in rows)

    async def forget_user(self, user_id: str) -> int:
        """Drop the user's turns from every session, current and archived (an archived one
        left empty is deleted); returns how many of their messages went."""
        dropped = 0
        async with self._database.connection(STORE) as connection, connection.transaction():
            dropped += await self._forget_in(connection, "sessions", "key", user_id)
            dropped += await self._forget_in(connection, "archived_sessions", "id", user_id)
        for session in [*self._last_seen.values(), *(u.session for u in self._unsaved)]:
            session.forget_user(user_id)  # copies kept for an outage hold none of it either
        return dropped

    async def _forget_in(
        self, connection: AsyncConnection, table: str, row_key: str, user_id: str
    ) -> int:
        names = {"table": sql.Identifier(table), "row": sql.Identifier(row_key)}
        cursor = await connection.execute(
            sql.SQL(
                "SELECT {row}, key, session FROM {table} WHERE people @> ARRAY[%s] FOR UPDATE"
            ).format(**names),
            (user_id,),
        )
        dropped = 0
        for row_id, key, text in await cursor.fetchall():
            session = _read(text, key)
            if session is None:  # unreadable, and theirs among others': it goes
                await connection.execute(
                    sql.SQL("DELETE FROM {table} WHERE {row} = %s").format(**names), (row_id,)
                )
                continue
            count = session.forget_user(user_id)
            dropped += count
            if count and table == "archived_sessions" and not session.turn_count:
                await connection.execute("DELETE FROM archived_sessions WHERE id = %s", (row_id,))
            elif count:
                await connection.execute(
                    sql.SQL("UPDATE {table} SET session = %s, people = %s WHERE {row} = %s").format(
                        **names
                    ),
                    (session.model_dump_json(), _people(session), row_id),
                )
        return dropped

    async def _write(self, key: str, retry: bool = False) -> bool:
        """Write the unsaved session of `key`, if still unsaved; False when the database is
        away (`retry`: see `Database.connection`)."""
        async with self._writing.hold(key):
            entry = self._unsaved.get(key)
            if entry is None:
                return True  # a save or retry that queued behind this one wrote it
            try:
                async with self._database.connection(STORE, retry) as connection:
                    if entry.partial:
                        await self._append(connection, entry.session)
                    else:
                        await _upsert(connection, entry.session)
            except DatabaseDown:
                return False
            if self._unsaved.written(entry):
                self._unread.discard(key)
            return True

    async def _append(self, connection: AsyncConnection, session: Session) -> None:
        """A session begun while the database was away goes after what it holds."""
        async with connection.transaction():
            cursor = await connection.execute(
                "SELECT session FROM sessions WHERE key = %s FOR UPDATE", (session.key,)
            )
            row = await cursor.fetchone()
            if row is not None:
                stored = _parsed(row[0], session.key)
                session.messages[:0] = stored.messages
                session.summary = session.summary or stored.summary
                for author, count in stored.summarised.items():
                    session.summarised[author] = session.summarised.get(author, 0) + count
                session.created_at = stored.created_at
            await _upsert(connection, session)

    def _remember(self, session: Session) -> None:
        self._last_seen[session.key] = session
        self._last_seen.move_to_end(session.key)
        while len(self._last_seen) > self._cache_size:
            self._last_seen.popitem(last=False)


async def _upsert(connection: AsyncConnection, session: Session) -> None:
    await connection.execute(
        "INSERT INTO sessions (key, session, people, updated_at) "
        "VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
        "session = EXCLUDED.session, people = EXCLUDED.people, updated_at = EXCLUDED.updated_at",
        (session.key, session.model_dump_json(), _people(session), session.updated_at),
    )


def _people(session: Session) -> list[str]:
    """Whose words the session may hold, as `Session.count_of` and `forget_user` match them:
    the chat's id (its owner, in a private chat), the group's memory scope, the authors, and
    the users in the summary."""
    parts = session.key.split(":")
    found = [parts[1], group_scope(parts[0], parts[1])] if len(parts) > 1 else []
    found += [m.user_id for m in session.messages if m.user_id]
    found += list(session.summarised)
    return sorted(set(found))


def _read(text: str, key: str) -> Session | None:
    """A stored session; None, with a log line, for a row this version cannot read."""
    try:
        session = Session.model_validate_json(text)
    except ValidationError as exc:
        log.warning(
            "[Sessions] the stored session of %s is damaged (%s); set it aside and started "
            "a fresh one",
            key,
            exc.errors(include_url=False)[0]["msg"],
        )
        return None
    session.key = key
    return session


def _parsed(text: str, key: str) -> Session:
    """A stored session, or an empty one when it cannot be read."""
    return _read(text, key) or Session(key=key)
