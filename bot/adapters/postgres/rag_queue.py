"""The RAG index queue and ledger in PostgreSQL (`rag_queue`, `rag_ledger`): the same promises
as the files (`bot/rag/queue.py`, `bot/rag/ledger.py`), for every process sharing the database.

A worker claims the oldest document nobody holds with `FOR UPDATE SKIP LOCKED` and holds it
for `LEASE_SECONDS`: two processes never send the same document, and one killed mid-send
leaves it to another once the lease ends (LightRAG then finds it already present, so it is
indexed once). A sent document's row is deleted; one the server refused for good stays, with
the reason, for an operator (`refused`). While the database is away, new documents wait in
memory (up to `max_unwritten`) and are written once it is back, as sessions' are.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable

from bot.adapters.postgres.database import Database, DatabaseDown
from bot.rag.model import LedgerEntry, QueuedDocument, RagDocument

log = logging.getLogger("bot.rag")

QUEUE = "index queue"
LEDGER = "index ledger"
LEASE_SECONDS = 120
"""How long a claim holds a document (longer than any upload takes) before another worker
may take it: the claimer was killed, or lost the database, mid-send."""
POLL_SECONDS = 2.0
"""How often an idle worker looks for documents other processes queued."""


class PostgresIndexQueue:
    """`IndexQueueStore` on PostgreSQL, and a `Backlog` of what the database refused."""

    unwritten_label = "document(s) for the index queue"
    poll_seconds: float | None = POLL_SECONDS

    def __init__(self, database: Database, max_unwritten: int = 1_000) -> None:
        self._database = database
        self.on_written: Callable[[], None] | None = None
        self._unwritten: OrderedDict[int, RagDocument] = OrderedDict()
        self._next_unwritten = 0
        self._max_unwritten = max_unwritten
        self._depth = 0
        self._failed = 0
        database.health.add_backlog(self)

    @property
    def depth(self) -> int:
        """Documents waiting, as last counted (at each claim), and those kept in memory."""
        return self._depth + len(self._unwritten)

    def failed_count(self) -> int:
        return self._failed

    async def load(self) -> None:
        """Count what earlier runs (or other processes) left, for `/status` and metrics."""
        try:
            await self._count()
        except DatabaseDown:
            pass

    async def put(self, document: RagDocument) -> None:
        try:
            await self._insert(document)
        except DatabaseDown:
            self._keep_unwritten(document)
            return
        if self._unwritten:
            await self.retry_unwritten()

    async def claim(self) -> QueuedDocument | None:
        async with self._database.connection(QUEUE) as connection:
            cursor = await connection.execute(
                "UPDATE rag_queue SET claimed_until = now() + make_interval(secs => %s)"
                " WHERE id = (SELECT id FROM rag_queue WHERE refused IS NULL"
                " AND (claimed_until IS NULL OR claimed_until < now())"
                " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, document",
                (LEASE_SECONDS,),
            )
            row = await cursor.fetchone()
        await self._count()
        if row is None:
            return None
        return QueuedDocument.of(str(row[0]), RagDocument.model_validate_json(row[1]))

    async def done(self, item: QueuedDocument) -> None:
        async with self._database.connection(QUEUE) as connection:
            await connection.execute("DELETE FROM rag_queue WHERE id = %s", (int(item.key),))
        self._depth = max(0, self._depth - 1)

    async def release(self, item: QueuedDocument) -> None:
        async with self._database.connection(QUEUE) as connection:
            await connection.execute(
                "UPDATE rag_queue SET claimed_until = NULL WHERE id = %s", (int(item.key),)
            )

    async def refuse(self, item: QueuedDocument, reason: str) -> None:
        async with self._database.connection(QUEUE) as connection:
            await connection.execute(
                "UPDATE rag_queue SET refused = %s, claimed_until = NULL WHERE id = %s",
                (reason, int(item.key)),
            )
        log.error("[RagIndexing] Set aside document %s: %s", item.key, reason)
        await self._count()

    async def count_of(self, owner: str) -> int:
        waiting = sum(1 for document in self._unwritten.values() if document.owner == owner)
        async with self._database.connection(QUEUE) as connection:
            cursor = await connection.execute(
                "SELECT count(*) FROM rag_queue WHERE owner = %s", (owner,)
            )
            row = await cursor.fetchone()
        return waiting + (int(row[0]) if row else 0)

    async def forget_where(self, owner: str, wanted: Callable[[RagDocument], bool]) -> int:
        """Drop the owner's documents `wanted` accepts; returns how many went."""
        mine = [k for k, d in self._unwritten.items() if d.owner == owner and wanted(d)]
        for key in mine:
            del self._unwritten[key]
        async with self._database.connection(QUEUE) as connection:
            cursor = await connection.execute(
                "SELECT id, document FROM rag_queue WHERE owner = %s", (owner,)
            )
            rows = await cursor.fetchall()
            gone = [key for key, text in rows if wanted(RagDocument.model_validate_json(text))]
            if gone:
                await connection.execute("DELETE FROM rag_queue WHERE id = ANY(%s)", (gone,))
        await self._count()
        return len(mine) + len(gone)

    async def forget_user(self, owner: str) -> int:
        mine = [key for key, document in self._unwritten.items() if document.owner == owner]
        for key in mine:
            del self._unwritten[key]
        async with self._database.connection(QUEUE) as connection:
            cursor = await connection.execute("DELETE FROM rag_queue WHERE owner = %s", (owner,))
        await self._count()
        return len(mine) + cursor.rowcount

    def unwritten(self) -> int:
        return len(self._unwritten)

    async def retry_unwritten(self) -> None:
        """Write what waits in memory, oldest first; stops at the first refusal."""
        written = 0
        for key, document in list(self._unwritten.items()):
            try:
                await self._insert(document, retry=True)
            except DatabaseDown:
                break
            self._unwritten.pop(key, None)
            written += 1
        if written and self.on_written is not None:
            self.on_written()

    async def _insert(self, document: RagDocument, retry: bool = False) -> None:
        async with self._database.connection(QUEUE, retry) as connection:
            await connection.execute(
                "INSERT INTO rag_queue (owner, document) VALUES (%s, %s)",
                (document.owner, document.model_dump_json()),
            )
        self._depth += 1

    async def _count(self) -> None:
        async with self._database.connection(QUEUE) as connection:
            cursor = await connection.execute(
                "SELECT count(*) FILTER (WHERE refused IS NULL),"
                " count(*) FILTER (WHERE refused IS NOT NULL) FROM rag_queue"
            )
            row = await cursor.fetchone()
        if row is not None:
            self._depth, self._failed = int(row[0]), int(row[1])

    def _keep_unwritten(self, document: RagDocument) -> None:
        self._next_unwritten += 1
        self._unwritten[self._next_unwritten] = document
        if len(self._unwritten) > self._max_unwritten:
            self._unwritten.popitem(last=False)
            log.error("[RagIndexing] over %d unwritten; dropped the oldest", self._max_unwritten)


class PostgresIndexLedger:
    """`IndexLedgerStore` on PostgreSQL: one row per document of a user (`file_source`)."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._owners = 0

    async def load(self) -> None:
        """Count the users with documents, for the LightRAG adapter's `owners`."""
        try:
            await self._count_owners()
        except DatabaseDown:
            pass

    async def record(self, owner: str, entry: LedgerEntry) -> None:
        async with self._database.connection(LEDGER) as connection:
            await connection.execute(
                "INSERT INTO rag_ledger (owner, file_source, entry) VALUES (%s, %s, %s)"
                " ON CONFLICT (owner, file_source) DO UPDATE SET entry = EXCLUDED.entry",
                (owner, entry.file_source, entry.model_dump_json()),
            )
        await self._count_owners()

    async def entries_of(self, owner: str) -> list[LedgerEntry]:
        async with self._database.connection(LEDGER) as connection:
            cursor = await connection.execute(
                "SELECT entry FROM rag_ledger WHERE owner = %s ORDER BY first", (owner,)
            )
            rows = await cursor.fetchall()
        return [LedgerEntry.model_validate_json(text) for (text,) in rows]

    async def holds(self, owner: str, file_source: str) -> bool:
        async with self._database.connection(LEDGER) as connection:
            cursor = await connection.execute(
                "SELECT 1 FROM rag_ledger WHERE owner = %s AND file_source = %s",
                (owner, file_source),
            )
            return await cursor.fetchone() is not None

    async def held(self, owner: str, file_sources: set[str]) -> set[str]:
        if not file_sources:
            return set()
        async with self._database.connection(LEDGER) as connection:
            cursor = await connection.execute(
                "SELECT file_source FROM rag_ledger WHERE owner = %s AND file_source = ANY(%s)",
                (owner, sorted(file_sources)),
            )
            return {source for (source,) in await cursor.fetchall()}

    async def forget(self, owner: str) -> None:
        async with self._database.connection(LEDGER) as connection:
            await connection.execute("DELETE FROM rag_ledger WHERE owner = %s", (owner,))
        await self._count_owners()

    async def drop(self, owner: str, file_sources: set[str]) -> None:
        async with self._database.connection(LEDGER) as connection:
            await connection.execute(
                "DELETE FROM rag_ledger WHERE owner = %s AND file_source = ANY(%s)",
                (owner, sorted(file_sources)),
            )
        await self._count_owners()

    def owner_count(self) -> int:
        return self._owners

    async def _count_owners(self) -> None:
        async with self._database.connection(LEDGER) as connection:
            cursor = await connection.execute("SELECT count(DISTINCT owner) FROM rag_ledger")
            row = await cursor.fetchone()
        self._owners = int(row[0]) if row else 0
