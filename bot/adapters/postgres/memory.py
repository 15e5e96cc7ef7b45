"""Short-term memory items in PostgreSQL (`memory_items`, see `memory_rows.py`): the same
promises as the JSONL files (`bot/memory/service.py`), for every process sharing the database.

Nothing is cached: each recall asks the database for the candidates (the items sharing a word
with the question, through the GIN index; the vectors of the current embedding model; the
strongest items), scores words and vectors in a worker thread, and ranks them with the file
store's own `rank_candidates`. A write takes the owner's advisory lock, so two processes
merging the same fact one after the other make one item, not two.

While the database cannot be reached a turn still answers: recall gives no `# Memory`, and
what a turn would store waits in memory (`max_unwritten` items at most) and is written, merged
as ever, once the database is back. `/memory`, `/forget` and the `memory` tool say they failed
rather than pretend.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime

from psycopg import AsyncConnection

from bot.adapters.postgres import memory_rows as rows
from bot.adapters.postgres.database import Database, DatabaseDown
from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.episodes import promotable, promoted
from bot.memory.exchanges import RemembersExchanges
from bot.memory.index import relevance_among
from bot.memory.model import (
    ItemType,
    Layer,
    MemoryItem,
    MemoryOverview,
    ScoredItem,
    fingerprint,
    reworded,
)
from bot.memory.packing import pack
from bot.memory.scoring import (
    EPISODE_POOL,
    PROFILE_TOP_K,
    Candidates,
    lexical_pool,
    oldest_recalled,
    rank_candidates,
)
from bot.memory.semantic import (
    ASKED_BEFORE,
    BATCH,
    AskedBefore,
    EmbeddingRest,
    item_text,
    vectors_of,
    worth_embedding,
)
from bot.memory.service import merge, relaxed_for_search
from bot.memory.text import tokens
from bot.ports.embeddings import EmbeddingError, EmbeddingPort, Vectors

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


class PostgresMemory(RemembersExchanges):
    """Every protocol of `bot/ports/memory.py` that `ShortTermMemory` implements, on
    PostgreSQL. A `Backlog` too: what the database refused is retried with the disk's."""

    label = "short-term memory items"
    unwritten_label = "unsaved memory item(s)"

    def __init__(
        self,
        database: Database,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], datetime] = utc_now,
        embedder: EmbeddingPort | None = None,
        max_unwritten: int = 5_000,
    ) -> None:
        super().__init__()
        self._database = database
        self._config = config
        self._clock = clock
        self._embedder = embedder
        self._rest = EmbeddingRest()
        self._asked = AskedBefore(ASKED_BEFORE)
        self._max_unwritten = max_unwritten
        self._unwritten: OrderedDict[str, list[MemoryItem]] = OrderedDict()
        self._filling: dict[str, asyncio.Task[None]] = {}
        database.health.add_backlog(self)

    @property
    def enabled(self) -> bool:
        return self._config().enabled

    # -- reading ----------------------------------------------------------------------------

    async def recall(self, user_id: str, query: str, config: MemoryConfig | None = None) -> str:
        """The `# Memory` pack, as the file store makes it; empty while the database is away."""
        config = config or self._config()
        try:
            found = await self._rank(user_id, query, config, worth_embedding(query))
        except DatabaseDown:
            return ""
        packed = pack(found, config)
        if packed.lines:
            log.info("[Memory] recalled %d items (%d tokens)", len(packed.lines), packed.tokens)
        return packed.text()

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]:
        """Items sharing words (or meaning) with `query`, best first, whatever their layer."""
        found = await self._rank(user_id, query, relaxed_for_search(self._config(), limit))
        return [scored for scored in found if scored.relevance > 0][:limit]

    async def nearest(self, user_id: str, text: str, limit: int) -> list[MemoryItem]:
        """Facts and how-tos `text` may confirm or contradict: those it matches, then the
        newest and strongest others (as the file store chooses them)."""
        found = {
            scored.item.id: scored.item
            for scored in await self.search(user_id, text, limit)
            if scored.item.layer is not Layer.EPISODIC
        }
        async with self._database.connection(STORE) as connection:
            now = self._clock()
            recent = await rows.live(connection, user_id, now, "layer <> 'episodic'")
            strong = await rows.strongest(connection, user_id, now, limit)
        others = {item.id: item for item in recent[:limit]}
        others.update((i, item) for i, item in strong.items() if item.layer is not Layer.EPISODIC)
        for item in sorted(others.values(), key=lambda item: item.updated_at, reverse=True):
            found.setdefault(item.id, item)
        return list(found.values())[:limit]

    async def overview(self, user_id: str) -> MemoryOverview:
        items = await self.live_items(user_id)
        facts = [item for item in items if item.layer is not Layer.EPISODIC]
        return MemoryOverview(facts, len(items) - len(facts))

    async def live_items(self, user_id: str) -> list[MemoryItem]:
        """Every item of this user that has not expired, newest first."""
        async with self._database.connection(STORE) as connection:
            return await rows.live(connection, user_id, self._clock())

    async def count_for(self, user_id: str) -> int:
        async with self._database.connection(STORE) as connection:
            count = await rows.size(connection, user_id, self._clock())
        return count + len(self._unwritten.get(user_id, ()))

    # -- writing ----------------------------------------------------------------------------

    async def add(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        """Store `new_items`, each merged into a kept item with its fingerprint (promoted when
        confident enough). While the database is away they wait, as given, and are returned."""
        if not new_items:
            return []
        config = config or self._config()
        try:
            stored = await self._write(user_id, new_items, config)
        except DatabaseDown:
            self._keep_unwritten(user_id, new_items)
            return new_items
        if self._unwritten:
            await self.retry_unwritten()
        self._fill_in_background(user_id)
        return stored

    async def replace(
        self, user_id: str, item_id: str, item_type: ItemType, content: str
    ) -> MemoryItem | None:
        """Give one item new wording and type under the same id (its vector goes with the
        old wording, and the new one is embedded)."""
        async with self._owner_transaction(user_id) as connection:
            old = await rows.one(connection, user_id, item_id)
            if old is None:
                return None
            new = reworded(old, item_type, content, self._clock())
            await rows.upsert(connection, user_id, [new])
        log.info("[Memory] updated item %s", item_id)
        self._fill_in_background(user_id)
        return new

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user (another user's id is simply not found)."""
        waiting = [item for item in self._unwritten.pop(user_id, []) if item.id != item_id]
        if waiting:  # a version waiting for the database must not bring the item back
            self._unwritten[user_id] = waiting
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "DELETE FROM memory_items WHERE owner = %s AND id = %s RETURNING item",
                (user_id, item_id),
            )
            row = await cursor.fetchone()
        if row is None:
            return None
        log.info("[Memory] forgot item %s", item_id)
        return MemoryItem.model_validate_json(row[0])

    async def forget_user(self, user_id: str) -> int:
        """Delete every item of this user, those waiting for the database too."""
        await self._exchanges_stored(user_id)
        waiting = len(self._unwritten.pop(user_id, ()))
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(
                "DELETE FROM memory_items WHERE owner = %s", (user_id,)
            )
        count = cursor.rowcount + waiting
        log.info("[Memory] forgot all %d items of a user", count)
        return count

    async def drain(self) -> None:
        """Wait for writes and embeddings still running in the background."""
        while self._background or self._filling:
            pending = [*self._background, *self._filling.values()]
            await asyncio.gather(*pending, return_exceptions=True)

    def unwritten(self) -> int:
        return sum(len(items) for items in self._unwritten.values())

    async def retry_unwritten(self) -> None:
        """Write what waits, oldest owner first; stops at the first refusal."""
        config = self._config()
        for user_id in list(self._unwritten):
            items = self._unwritten.pop(user_id, [])
            try:
                await self._write(user_id, items, config, retry=True)
            except DatabaseDown:
                self._unwritten[user_id] = items + self._unwritten.get(user_id, [])
                self._unwritten.move_to_end(user_id, last=False)
                return
            self._fill_in_background(user_id)

    # -- internals --------------------------------------------------------------------------

    async def _rank(
        self, user_id: str, query: str, config: MemoryConfig, by_meaning: bool = True
    ) -> list[ScoredItem]:
        """Two visits to the database, the question embedded between them (unless not
        `by_meaning`): a slow embedding server never holds a pooled connection. The user's
        exchanges this process is still storing are waited for first, so a message sent
        right after another reads its items (as the file store, which holds them in memory,
        does)."""
        await self._exchanges_stored(user_id)
        now = self._clock()
        terms = list(dict.fromkeys(tokens(query)))
        async with self._database.connection(STORE) as connection:
            words = await rows.statistics(connection, user_id, now, terms)
            if not words.count:
                return []  # nothing to recall: the question need not be embedded
            searched = rows.searched_terms(terms, words.holding)
            sharing = (
                await rows.sharing_words(connection, user_id, now, terms, searched)
                if searched
                else []
            )
            profile = await rows.strongest(connection, user_id, now, PROFILE_TOP_K * 3)
        vector = await self._query_vector(query) if by_meaning else None
        async with self._database.connection(STORE) as connection:
            stored: list[tuple[str, bytes]] = []
            if vector is not None and self._embedder is not None:
                oldest = oldest_recalled(now, config)
                model_id = self._embedder.model_id
                stored = await rows.vectors(connection, user_id, now, model_id, oldest)
            lexical, near = await asyncio.to_thread(_score, terms, sharing, words, stored, vector)
            wanted = [i for i in dict.fromkeys([*lexical, *near]) if i not in profile]
            items = await rows.by_ids(connection, user_id, wanted)
        items.update(profile)
        candidates = Candidates(lexical, near, items, list(profile))
        return rank_candidates(candidates, now, config)

    async def _query_vector(self, query: str) -> Vectors | None:
        """The question's vector; None ("words alone") while embeddings are off or resting."""
        if self._embedder is None or not self._embedder.model_id or not query.strip():
            return None
        if self._rest.resting():
            return None
        model_id = self._embedder.model_id
        vector = self._asked.get(model_id, query)
        if vector is not None:
            return vector
        try:
            async with asyncio.timeout(self._config().embeddings.timeout_seconds):
                vector = (await self._embedder.embed([query]))[0]
        except (EmbeddingError, TimeoutError) as exc:
            self._rest.failed(exc)
            return None
        self._rest.succeeded()
        self._asked.put(model_id, query, vector)
        return vector

    async def _write(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig, retry: bool = False
    ) -> list[MemoryItem]:
        threshold = config.promotion_min_confidence
        async with self._owner_transaction(user_id, retry) as connection:
            now = self._clock()
            wanted = [fp for new in new_items for fp in _fingerprints(new)]
            kept = await rows.by_fingerprint(connection, user_id, wanted, now)
            stored: dict[str, MemoryItem] = {}
            for new in new_items:
                existing = next((kept[fp] for fp in _fingerprints(new) if fp in kept), None)
                item = merge(existing, new, now) if existing is not None else new
                if promotable(item, threshold):
                    item = promoted(item, now)
                    log.info("[Memory] promoted %s to %s", item.id, item.layer.value)
                kept[item.fingerprint] = kept[new.fingerprint] = item
                stored[item.id] = item
            await rows.upsert(connection, user_id, list(stored.values()))
            await connection.execute(
                "DELETE FROM memory_items WHERE owner = %s AND expires_at <= %s", (user_id, now)
            )
            await connection.execute(
                EVICT_OLDEST_EPISODES, (user_id, user_id, config.max_episodes - 1)
            )
        return list(stored.values())

    @asynccontextmanager
    async def _owner_transaction(
        self, user_id: str, retry: bool = False
    ) -> AsyncIterator[AsyncConnection]:
        """A transaction holding the owner's advisory lock: one writer of their items at a
        time, across processes (`DatabaseDown` when the database is away)."""
        async with self._database.connection(STORE, retry) as connection:
            async with connection.transaction():
                await connection.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (OWNER_LOCK, user_id)
                )
                yield connection

    def _keep_unwritten(self, user_id: str, items: list[MemoryItem]) -> None:
        self._unwritten.setdefault(user_id, []).extend(items)
        self._unwritten.move_to_end(user_id)
        while self.unwritten() > self._max_unwritten and self._unwritten:
            dropped, lost = self._unwritten.popitem(last=False)
            log.error(
                "[Memory] more than %d items wait for the database; dropped %d of %s",
                self._max_unwritten,
                len(lost),
                dropped,
            )

    def _fill_in_background(self, user_id: str) -> None:
        """Embed this user's items that lack a vector of the current model; one task per user."""
        embedder = self._embedder
        if embedder is None or not embedder.model_id or self._rest.resting():
            return
        if user_id in self._filling:
            return
        task = asyncio.create_task(self._fill(user_id, embedder), name=f"memory-embed:{user_id}")
        self._filling[user_id] = task
        task.add_done_callback(lambda _: self._filling.pop(user_id, None))

    async def _fill(self, user_id: str, embedder: EmbeddingPort) -> None:
        while (model_id := embedder.model_id) and not self._rest.resting():
            try:
                async with self._database.connection(STORE) as connection:
                    batch = await rows.unembedded(
                        connection, user_id, self._clock(), model_id, BATCH
                    )
                if not batch:
                    return
                texts = [item_text(item) for item in batch]
                found = await vectors_of(embedder, self._asked, model_id, texts)
                self._rest.succeeded()
                async with self._database.connection(STORE) as connection:
                    await rows.store_vectors(connection, user_id, model_id, batch, found)
            except EmbeddingError as exc:
                self._rest.failed(exc)
                return
            except DatabaseDown:
                return  # embedded later, after the next write


def _fingerprints(item: MemoryItem) -> list[str]:
    """What makes a kept item the same memory as `item` (see `same_memory`, in order)."""
    found = [item.fingerprint] if item.fingerprint else []
    return [*found, fingerprint(item.type, item.content)]


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
