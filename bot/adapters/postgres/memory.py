"""Short-term memory items in PostgreSQL (`memory_items`, see `memory_rows.py`): the
`MemoryRepository` (`bot/memory/repository.py`) of a bot with `DATABASE_URL`, for every process
sharing the database.

Nothing is cached: each recall asks the database for the candidates (the items sharing a word
with the question, through the GIN index; the vectors of the current embedding model; the
strongest items) and scores words and vectors in a worker thread; `MemoryService` ranks them.
A write runs in a transaction holding the owner's advisory lock, so two processes merging the
same fact one after the other make one item, not two. While the config sets no episode TTL,
an owner's stored TTLs are cleared the first time this process reads or writes that owner
(`bot/memory/retention.py`), and no row is deleted by one.

While the database cannot be reached, calls raise `DatabaseDown` (a `StoreDown`): the service
answers recalls without `# Memory` and keeps what a turn would store until the database is
back (`max_unwritten` items at most, retried with the database's backlog).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from datetime import datetime

from psycopg import AsyncConnection

from bot.adapters.postgres import memory_rows as rows
from bot.adapters.postgres.database import Database
from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.documents import is_part_of
from bot.memory.index import relevance_among
from bot.memory.model import FACT_LAYERS, Layer, MemoryItem
from bot.memory.repository import Question
from bot.memory.retention import ttl_applies
from bot.memory.scoring import (
    EPISODE_POOL,
    PROFILE_TOP_K,
    Candidates,
    lexical_pool,
    oldest_recalled,
)
from bot.memory.service import MemoryService
from bot.memory.text import tokens
from bot.ports.embeddings import EmbeddingPort, Vectors

log = logging.getLogger(__name__)

STORE = "memory items"
OWNER_LOCK = 0x6D656D  # with the owner's hash: one writer of an owner's items at a time


EVICT_OLDEST_EPISODES = """
    DELETE FROM memory_items WHERE owner = %s AND layer = 'episodic' AND updated_at < (
        SELECT updated_at FROM memory_items WHERE owner = %s AND layer = 'episodic'
        ORDER BY updated_at DESC OFFSET %s LIMIT 1
    )
"""
"""A user's episodes past `maxEpisodes`, the oldest, go: a long life is bounded by count, not
age. The index on (owner, layer, updated_at) walks the cap's entries, no more."""

CLEAR_STORED_TTL = """
    UPDATE memory_items SET expires_at = NULL, item = (item::jsonb || '{"ttl_days": null}')::text
    WHERE owner = %s AND expires_at IS NOT NULL
"""
"""One owner's stored TTLs, cleared while the config sets none (`bot/memory/retention.py`):
idempotent, so several processes may run it at once; the (owner) index finds the rows."""


def postgres_memory(
    database: Database,
    config: Callable[[], MemoryConfig],
    clock: Callable[[], datetime] = utc_now,
    embedder: EmbeddingPort | None = None,
    max_unwritten: int = 5_000,
) -> MemoryService:
    """Short-term memory in `database`; what it refuses waits and is retried with the
    database's backlog (see `DatabaseHealth`)."""
    repository = PostgresRepository(database, config, clock)
    memory = MemoryService(repository, config, clock, embedder, max_unwritten=max_unwritten)
    database.health.add_backlog(memory)
    return memory


class PostgresRepository:
    """`MemoryRepository` in the `memory_items` table, shared by every process on the
    database; `DatabaseDown` (a `StoreDown`) while it is away."""

    def __init__(
        self,
        database: Database,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._database = database
        self._config = config
        self._clock = clock
        self._ttl_cleared: set[str] = set()
        """Owners whose stored TTLs were cleared since the config last set none."""

    # -- reading ----------------------------------------------------------------------------

    async def candidates(
        self, user_id: str, question: Question, now: datetime, config: MemoryConfig
    ) -> Candidates:
        """Two visits to the database, the question embedded between them: a slow embedding
        server never holds a pooled connection. The user's exchanges this process is still
        storing are waited for first, so a message sent right after another reads its items
        (as the file repository, which holds them in memory, does)."""
        await question.exchanges_stored()
        terms = list(dict.fromkeys(tokens(question.text)))
        async with self._database.connection(STORE) as connection:
            await self._clear_stored_ttl(connection, user_id)
            words = await rows.statistics(connection, user_id, now, terms)
            if not words.count:
                return Candidates({}, {}, {}, [])  # nothing to recall: no question to embed
            searched = rows.searched_terms(terms, words.holding)
            sharing = (
                await rows.sharing_words(connection, user_id, now, terms, searched)
                if searched
                else []
            )
            profile = await rows.strongest(connection, user_id, now, PROFILE_TOP_K * 3)
        embedded = await question.vector(False)
        async with self._database.connection(STORE) as connection:
            stored: list[tuple[str, bytes]] = []
            if embedded is not None:
                oldest = oldest_recalled(now, config)
                stored = await rows.vectors(connection, user_id, now, embedded.model_id, oldest)
            vector = embedded.vector if embedded is not None else None
            lexical, near = await asyncio.to_thread(_score, terms, sharing, words, stored, vector)
            wanted = [i for i in dict.fromkeys([*lexical, *near]) if i not in profile]
            items = await rows.by_ids(connection, user_id, wanted)
        items.update(profile)
        return Candidates(lexical, near, items, list(profile))

    async def live_items(self, user_id: str, now: datetime) -> list[MemoryItem]:
        """Newest first."""
        async with self._database.connection(STORE) as connection:
            await self._clear_stored_ttl(connection, user_id)
            return await rows.live(connection, user_id, now)

    async def count(self, user_id: str, now: datetime) -> int:
        async with self._database.connection(STORE) as connection:
            await self._clear_stored_ttl(connection, user_id)
            return await rows.size(connection, user_id, now)

    async def recent_facts(self, user_id: str, now: datetime, limit: int) -> list[MemoryItem]:
        async with self._database.connection(STORE) as connection:
            await self._clear_stored_ttl(connection, user_id)
            facts = "layer IN ('semantic', 'procedural')"
            recent = await rows.live(connection, user_id, now, facts)
            strong = await rows.strongest(connection, user_id, now, limit)
        others = {item.id: item for item in recent[:limit]}
        others.update((i, item) for i, item in strong.items() if item.layer in FACT_LAYERS)
        return list(others.values())

    async def parts_of(self, user_id: str, document_id: str) -> list[MemoryItem]:
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "SELECT item FROM memory_items WHERE owner = %s AND layer = %s"
                " AND starts_with(id, %s) ORDER BY id",
                (user_id, Layer.DOCUMENT.value, document_id),
            )
            found = [MemoryItem.model_validate_json(text) for (text,) in await cursor.fetchall()]
        return [item for item in found if is_part_of(item, document_id)]

    # -- writing ----------------------------------------------------------------------------

    @asynccontextmanager
    async def writing(self, user_id: str, retry: bool = False) -> AsyncIterator[_PostgresOwner]:
        """A transaction holding the owner's advisory lock: one writer of their items at a
        time, across processes (`DatabaseDown` when the database is away)."""
        async with self._database.connection(STORE, retry) as connection:
            await self._clear_stored_ttl(connection, user_id)  # committed before the write
            async with connection.transaction():
                await connection.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (OWNER_LOCK, user_id)
                )
                yield _PostgresOwner(connection, user_id)

    async def forget_many(self, user_id: str, item_ids: Collection[str]) -> list[MemoryItem]:
        """In one statement (a row's vector is in the row)."""
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "DELETE FROM memory_items WHERE owner = %s AND id = ANY(%s) RETURNING item",
                (user_id, sorted(set(item_ids))),
            )
            return [MemoryItem.model_validate_json(text) for (text,) in await cursor.fetchall()]

    async def forget_user(self, user_id: str) -> int:
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "DELETE FROM memory_items WHERE owner = %s", (user_id,)
            )
        return cursor.rowcount

    # -- vectors ----------------------------------------------------------------------------

    async def unembedded(self, user_id: str, model_id: str, limit: int) -> list[MemoryItem]:
        async with self._database.connection(STORE) as connection:
            return await rows.unembedded(connection, user_id, self._clock(), model_id, limit)

    async def store_vectors(
        self, user_id: str, model_id: str, batch: list[MemoryItem], vectors: Vectors
    ) -> None:
        async with self._database.connection(STORE) as connection:
            await rows.store_vectors(connection, user_id, model_id, batch, vectors)

    def pending(self) -> list[Awaitable[object]]:
        """Nothing: every call is awaited by its caller."""
        return []

    async def _clear_stored_ttl(self, connection: AsyncConnection, user_id: str) -> None:
        """While the config sets no episode TTL, clear the TTLs stored with this owner's
        items, once per owner and process (and again after the config set one meanwhile),
        so that none expires by it. The set grows by one short id per owner served."""
        if ttl_applies(self._config()):
            self._ttl_cleared.clear()
            return
        if user_id in self._ttl_cleared:
            return
        cursor = await connection.execute(CLEAR_STORED_TTL, (user_id,))
        self._ttl_cleared.add(user_id)
        if cursor.rowcount:
            log.info("[Memory] kept %d item(s) past their stored TTL: none is set", cursor.rowcount)


class _PostgresOwner:
    """One owner's rows, inside `PostgresRepository.writing`'s transaction."""

    def __init__(self, connection: AsyncConnection, user_id: str) -> None:
        self._connection = connection
        self._user_id = user_id

    async def kept(self, fingerprints: list[str], now: datetime) -> dict[str, MemoryItem]:
        return await rows.by_fingerprint(self._connection, self._user_id, fingerprints, now)

    async def get(self, item_id: str) -> MemoryItem | None:
        return await rows.one(self._connection, self._user_id, item_id)

    async def put(self, items: list[MemoryItem], promoted_ids: set[str]) -> None:
        """By id: a promoted item's row changes its layer."""
        await rows.upsert(self._connection, self._user_id, items)

    async def tidy(self, now: datetime, max_episodes: int, expire: bool) -> None:
        """The expired rows go (when `expire`), and the episodes past `max_episodes`."""
        if expire:
            await self._connection.execute(
                "DELETE FROM memory_items WHERE owner = %s AND expires_at <= %s",
                (self._user_id, now),
            )
        await self._connection.execute(
            EVICT_OLDEST_EPISODES, (self._user_id, self._user_id, max_episodes - 1)
        )


def _score(
    terms: list[str],
    sharing: list[tuple[str, int, list[int]]],
    words: rows.WordStatistics,
    stored: list[tuple[str, bytes]],
    vector: Vectors | None,
) -> tuple[dict[str, float], dict[str, float]]:
    """BM25 of the items sharing words and the nearest vectors (a worker thread's work)."""
    lexical = relevance_among(terms, sharing, words.holding, words.count, words.total_length)
    near = rows.nearest(stored, vector, EPISODE_POOL) if vector is not None else {}
    return lexical_pool(lexical), near
