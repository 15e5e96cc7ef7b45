"""The connection to PostgreSQL: a pool, opened and migrated at start, and its health.

psycopg 3's asyncio API with `psycopg-pool`: typed (mypy checks the queries' parameters),
URL and libpq environment handling as every PostgreSQL tool has it, and a pool that
reconnects in the background after a restart.

The pool checks a connection before lending it, with a round trip, only when there is a reason
to doubt it (`Database._check`): it has been idle longer than `TRUSTED_IDLE_SECONDS`, or the
server has sent it something unasked, which is how a restart, a shutdown or
`pg_terminate_backend` announces itself (a FATAL message, then the end of the stream). A
connection that just answered and has heard nothing since is lent as it is: checking each one
cost a round trip per call, a sixth of a busy process's CPU. So an outage that ends the
server's sessions (a restart, a stop, a terminated backend) is still found by the check, and
the pool replaces the connection before a store's statement could fail on it; one that leaves
no trace on the socket (a network cut) fails the call that meets it, as a check would have.

A database that cannot be reached at start stops the bot with one clear message
(`DatabaseUnavailable`); one lost while the bot runs makes each store call fail fast with
`DatabaseDown` (the stores keep what they could not write and answer anyway), with one log
line when it goes and one when it is back, and a line in `/status` meanwhile. The URL is
never logged with its password (`describe_url`).
"""

from __future__ import annotations

import logging
import os
import select
import time
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import psycopg
from psycopg import AsyncConnection, pq
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from bot.adapters.postgres.cancellation import cancel_requests, raise_if_cancelled_since
from bot.adapters.postgres.errors import DatabaseDown, DatabaseUnavailable
from bot.adapters.postgres.migrations import migrate
from bot.conversation.scope import MemoryScope
from bot.storage.disk import Backlog

log = logging.getLogger(__name__)

CONNECT_SECONDS = 5.0
"""How long a start waits for the database."""
CALL_SECONDS = 3.0
"""How long a call waits for a connection before it counts the database as down (longer
than the pool's longest pause between two reconnection attempts)."""
REST_SECONDS = 30.0
"""After a failure, a turn's calls fail at once for this long instead of each waiting
`CALL_SECONDS`: a dead database costs one turn one wait per rest. The retries of what waits
in memory (every 30 s, `DiskHealth.run_retries`) do not rest: they find the database back."""

APPLICATION_NAME = f"memory-bot pid {os.getpid()}"
"""How this process's own connections show in `pg_stat_activity`: which process holds which
chats' locks (`pg_locks`), for operators."""

TRUSTED_IDLE_SECONDS = 5.0
"""A pooled connection idle longer than this is checked with a round trip before it is lent
(one used more recently, only if the server has sent it something since)."""

RECONNECT_SECONDS = 3.0
"""How long the pool's background reconnection tries (1 s, 2 s) before a call starts anew."""


def describe_url(url: str) -> str:
    """`user@host:port/database`: where the bot connects, without the password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(an unreadable DATABASE_URL)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"{user}{host}{port}/{parts.get('dbname') or ''}"


class DatabaseHealth:
    """`StatusProvider` for the database: one log line per outage, `/status` while it lasts,
    and how much the stores keep in memory meanwhile."""

    def __init__(self, where: str = "", timer: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        """`user@host:port/database`, for operators' `/status` only."""
        self._timer = timer
        self._failure: str | None = None
        self._failed_at = 0.0
        self._backlogs: list[Backlog] = []

    @property
    def failing(self) -> bool:
        return self._failure is not None

    def add_backlog(self, backlog: Backlog) -> None:
        self._backlogs.append(backlog)

    def resting(self) -> bool:
        """True shortly after a failure: the next call fails at once (`REST_SECONDS`)."""
        return self.failing and self._timer() - self._failed_at < REST_SECONDS

    def failed(self, what: str, exc: BaseException) -> None:
        if self._failure is None:
            log.error(
                "[Database] cannot reach the database (%s) for the %s; answering anyway, "
                "changes kept in memory and retried",
                _reason(exc),
                what,
            )
        self._failure = _reason(exc)
        self._failed_at = self._timer()

    def worked(self) -> None:
        if self._failure is not None:
            self._failure = None
            log.info("[Database] the database answers again")

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        if self._failure is None:
            return []
        waiting = [f"{b.unwritten()} {b.unwritten_label}" for b in self._backlogs if b.unwritten()]
        kept = f"; kept in memory and retried: {', '.join(waiting)}" if waiting else ""
        return [f"⚠ Database unreachable: recent changes may not be saved{kept}"]

    async def operator_status_lines(self, scope: MemoryScope) -> list[str]:
        """Where the state lives, and the outage's reason, for the people who run the bot."""
        lines = await self.status_lines(scope)
        if self._failure is not None:
            return [f"{lines[0]} ({self.where}: {self._failure})"]
        return [f"Database: PostgreSQL {self.where}, reachable"]


def _heard_from_server(connection: AsyncConnection) -> bool:
    """True when the server has sent an idle connection something (a FATAL message before it
    closes the connection, or the close itself), without reading it; a poll, no round trip."""
    poller = select.poll()
    poller.register(connection.pgconn.socket, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


def _reason(exc: BaseException) -> str:
    """The first line of a driver error: libpq's messages name host and port, never secrets."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class Database:
    """A pool of connections to one database; `open` it at start, `close` it at the end."""

    def __init__(
        self,
        url: str,
        health: DatabaseHealth | None = None,
        max_connections: int = 10,
        connect_seconds: float = CONNECT_SECONDS,
    ) -> None:
        self.where = describe_url(url)
        self._url = url
        self.health = health or DatabaseHealth(self.where)
        self._connect_seconds = connect_seconds
        self._pool: AsyncConnectionPool[AsyncConnection] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            open=False,
            timeout=connect_seconds,
            # The pool's own reconnection backs off, doubling; giving up soon lets the next
            # call start a fresh attempt, so a database that is back is found within seconds.
            reconnect_timeout=RECONNECT_SECONDS,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(connect_seconds))},
            check=self._check,
            name="bot",
        )
        self._last_answered: weakref.WeakKeyDictionary[AsyncConnection, float] = (
            weakref.WeakKeyDictionary()
        )

    async def open(self) -> None:
        """Connect and bring the schema up to date; `DatabaseUnavailable` when it cannot."""
        try:  # one connection first: libpq's own reason beats a pool's time-out
            async with await AsyncConnection.connect(
                self._url, autocommit=True, connect_timeout=max(1, round(self._connect_seconds))
            ) as connection:
                applied = await migrate(connection)
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(
                f"Cannot connect to the database {self.where} (DATABASE_URL): {_reason(exc)}"
            ) from exc
        except psycopg.Error as exc:
            raise DatabaseUnavailable(
                f"Cannot prepare the database {self.where}: {_reason(exc)}"
            ) from exc
        try:
            await self._pool.open(wait=True, timeout=self._connect_seconds)
        except PoolTimeout as exc:
            await self._pool.close()
            raise DatabaseUnavailable(
                f"Cannot connect to the database {self.where} (DATABASE_URL) within "
                f"{self._connect_seconds:g}s"
            ) from exc
        if applied:
            log.info("[Database] %s: schema steps %s applied", self.where, applied)
        log.info("[Database] using %s", self.where)

    async def close(self) -> None:
        await self._pool.close()

    def pool_figures(self) -> dict[str, int]:
        """The pool's own figures (psycopg_pool's `get_stats`): connections, requests waiting."""
        return dict(self._pool.get_stats())

    async def dedicated(self) -> AsyncConnection:
        """A connection of its own, outside the pool, for what lives as long as a session
        does (advisory locks held for a while, LISTEN); the caller closes it."""
        return await AsyncConnection.connect(
            self._url,
            autocommit=True,
            connect_timeout=max(1, round(self._connect_seconds)),
            application_name=APPLICATION_NAME,
        )

    @asynccontextmanager
    async def connection(self, what: str, retry: bool = False) -> AsyncIterator[AsyncConnection]:
        """A pooled connection for the `what` store; `DatabaseDown` when none can be had or it
        breaks meanwhile (reported to `health`). A `retry` of what waits in memory is tried
        even while turns rest (it is what finds the database back)."""
        if self.health.resting() and not retry:
            raise DatabaseDown(what)
        asked_to_stop = cancel_requests()
        try:
            async with self._pool.connection(timeout=CALL_SECONDS) as connection:
                raise_if_cancelled_since(asked_to_stop)  # a lost one (`cancellation.py`)
                yield connection
                self._last_answered[connection] = time.monotonic()
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self.health.failed(what, exc)
            raise DatabaseDown(what) from exc
        self.health.worked()

    async def _check(self, connection: AsyncConnection) -> None:
        """The pool's check before it lends `connection`: a round trip only when in doubt
        (see the module docstring); raising makes the pool drop it and try another."""
        answered = self._last_answered.get(connection)
        if (
            answered is None
            or time.monotonic() - answered > TRUSTED_IDLE_SECONDS
            or connection.pgconn.status != pq.ConnStatus.OK
            or _heard_from_server(connection)
        ):
            await AsyncConnectionPool.check_connection(connection)
