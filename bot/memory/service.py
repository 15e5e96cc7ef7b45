"""Short-term structured memory: what context building, the persist system, the `memory` tool
and the memory commands all talk to.

Each user's items live in their own files (`UserFiles`) and, once used, in memory
(`UserItems`, an LRU of recently active users). A per-user lock makes one writer per user's
files at a time; different users never wait for each other. Reads need no lock once a user is
loaded: every change updates the in-memory items on the event loop before its fsync starts,
so the next turn sees it at once.

Loading a user reads and indexes every item in a worker thread, under the user's lock, so
every write waits for it. A recall waits for it at most `FIRST_RECALL_WAIT`: a heavy user's
first message is answered from their facts and how-tos, read first, while the episodes
still load. The thread builds each piece whole and hands it to the event loop, which never
sees a structure the thread is still changing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.episodes import promotable, promoted
from bot.memory.exchanges import RemembersExchanges
from bot.memory.files import UserFiles, remove_ids
from bot.memory.loading import read_items
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
from bot.memory.scoring import nearest_in_meaning, rank, word_matches
from bot.memory.semantic import SemanticMemory, worth_embedding
from bot.memory.user_items import UserItems
from bot.ports.embeddings import EmbeddingPort, Vectors
from bot.runtime import full_collections_paused, settle

log = logging.getLogger(__name__)

REPEAT_WEIGHT = 0.8
"""How much a repeat counts as fresh evidence: 0.5 twice gives 0.7, three times 0.82."""

FIRST_RECALL_WAIT = 0.8
"""Seconds a recall waits for a user's items still loading (100k items take seconds) before it
answers from what is in already: their facts and how-tos, or nothing."""

SEARCH_IN_THREAD_FROM = 20_000
"""Vectors from which a recall searches them in a worker thread: 100k take 15-40 ms, a pause
every other chat would feel; 10k take 1-4 ms, too little to be worth a hop to a thread."""


class ShortTermMemory(RemembersExchanges):
    """Short-term memory over per-user JSONL files under `root`: every protocol of
    `bot/ports/memory.py` but the extractor's queue."""

    label = "short-term memory items"

    def __init__(
        self,
        root: Path,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], datetime] = utc_now,
        cached_users: int = 64,
        embedder: EmbeddingPort | None = None,
        timer: Callable[[], float] = time.monotonic,
        first_recall_wait: float = FIRST_RECALL_WAIT,
        user_files: Callable[[Path, str], UserFiles] = UserFiles,
    ) -> None:
        super().__init__()
        self.root = root
        self._user_files = user_files
        self._config = config
        self._clock = clock
        self._cached_users = cached_users
        self._first_recall_wait = first_recall_wait
        self._loaded: OrderedDict[str, UserItems] = OrderedDict()
        self._loading: dict[str, _Loading] = {}
        self._load_tasks: dict[str, asyncio.Task[UserItems]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._semantic = (
            SemanticMemory(
                embedder,
                lambda: config().embeddings,
                lambda user_id: user_files(root, user_id).directory,
                self._loaded.get,
                self._lock,
                timer,
            )
            if embedder is not None
            else None
        )

    @property
    def enabled(self) -> bool:
        """`memory.enabled` of the runtime config, as it is now."""
        return self._config().enabled

    # -- reading ----------------------------------------------------------------------------

    async def recall(self, user_id: str, query: str, config: MemoryConfig | None = None) -> str:
        """The `# Memory` pack for this user and message; empty when nothing scores enough.

        `config` is the turn's snapshot; None (outside a turn) takes the config as it is now."""
        config = config or self._config()
        items, whole = await self._items_for_recall(user_id)
        # Vectors open only over a user's whole set of items.
        embedding = await self._embed_meanwhile(user_id, items, query) if whole else None
        words = word_matches(items, query)  # on the loop, while a thread embeds the question
        vector = await embedding if embedding is not None else None
        meaning = await self._meaning(items, vector)
        packed = pack(rank(items, query, self._clock(), config, vector, words, meaning), config)
        if packed.lines:
            log.info("[Memory] recalled %d items (%d tokens)", len(packed.lines), packed.tokens)
        return packed.text()

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]:
        """Items sharing words with `query`, best first, whatever their layer's top-k."""
        relaxed = relaxed_for_search(self._config(), limit)
        items = await self._items(user_id)
        vector = await self._query_vector(user_id, items, query)
        meaning = await self._meaning(items, vector)
        found = rank(items, query, self._clock(), relaxed, vector, meaning=meaning)
        return [scored for scored in found if scored.relevance > 0][:limit]

    async def nearest(self, user_id: str, text: str, limit: int) -> list[MemoryItem]:
        """Facts and how-tos `text` may confirm or contradict, for LLM extraction to judge.

        Items sharing words with `text` come first, then the user's newest and strongest ones:
        "I moved to Berlin" shares no word with "The user lives in Porto", yet supersedes it.
        Episodes are left out: they record what was said, they are not facts to correct.
        """
        items = await self._items(user_id)
        found = {
            scored.item.id: scored.item
            for scored in await self.search(user_id, text, limit)
            if scored.item.layer is not Layer.EPISODIC
        }
        others = (items.get(item_id) for item_id in [*items.newest(limit), *items.strongest(limit)])
        recent = sorted(
            (item for item in others if item is not None and item.layer is not Layer.EPISODIC),
            key=lambda item: item.updated_at,
            reverse=True,
        )
        for item in recent:
            found.setdefault(item.id, item)
        return list(found.values())[:limit]

    async def overview(self, user_id: str) -> MemoryOverview:
        items = await self._items(user_id)
        now = self._clock()
        live = [item for item in items if not item.expired(now)]
        facts = [item for item in live if item.layer is not Layer.EPISODIC]
        facts.sort(key=lambda item: item.updated_at, reverse=True)
        return MemoryOverview(facts, len(live) - len(facts))

    async def live_items(self, user_id: str) -> list[MemoryItem]:
        """Every item of this user that has not expired, in no particular order."""
        now = self._clock()
        return [item for item in await self._items(user_id) if not item.expired(now)]

    async def count_for(self, user_id: str) -> int:
        now = self._clock()
        return sum(1 for item in await self._items(user_id) if not item.expired(now))

    # -- writing ----------------------------------------------------------------------------

    async def add(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        """Store `new_items`, merging each into a kept item with the same fingerprint.

        An episodic item that becomes confident enough (by `config`, as in `recall`) is
        promoted on the spot. Returns the items as stored (a merged item keeps its first id).
        """
        config = config or self._config()
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            now = self._clock()
            threshold = config.promotion_min_confidence
            stored: list[MemoryItem] = []
            promoted_ids: set[str] = set()
            for new in new_items:
                existing = same_memory(items, new)
                item = merge(existing, new, now) if existing is not None else new
                if promotable(item, threshold):
                    item = promoted(item, now)
                    promoted_ids.add(item.id)
                    log.info("[Memory] promoted %s to %s", item.id, item.layer.value)
                items.put(item)
                stored.append(item)
            await asyncio.to_thread(self._write, user_id, stored, promoted_ids)
            await self._evict_oldest_episodes(user_id, items, config.max_episodes)
        if self._semantic is not None:
            self._semantic.fill_in_background(user_id)
        return stored

    async def _evict_oldest_episodes(self, user_id: str, items: UserItems, cap: int) -> None:
        """Keep at most `cap` episodes: a long life is kept whole, bounded by count rather
        than age. Past the cap, the episodes updated longest ago go, a tenth of the cap at
        once, so that a day file is rewritten once per many turns rather than every turn."""
        if items.count(Layer.EPISODIC) <= cap:
            return
        excess = items.count(Layer.EPISODIC) - cap + max(1, cap // 10)
        gone = [item for i in items.oldest(Layer.EPISODIC, excess) if (item := items.remove(i))]
        await asyncio.to_thread(self._erase_many, user_id, gone)
        if self._semantic is not None:
            await self._semantic.forget(user_id, {item.id for item in gone})
        log.info("[Memory] past %d episodes: the %d oldest went", cap, len(gone))

    async def replace(
        self, user_id: str, item_id: str, item_type: ItemType, content: str
    ) -> MemoryItem | None:
        """Give one item new wording and type under the same id: a newer fact superseding it.

        Durable like `add`. When the type moves the item to another layer, the new version is
        appended to its new file before the old file loses it, so a crash keeps one of the two.
        """
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            old = items.get(item_id)
            if old is None:
                return None
            new = reworded(old, item_type, content, self._clock())
            items.put(new)

            def write() -> None:
                files = self._files(user_id)
                files.append([new])
                if files.path_for(old) != files.path_for(new):
                    remove_ids(files.path_for(old), {item_id})

            await asyncio.to_thread(write)
            log.info("[Memory] updated item %s", item_id)
        if self._semantic is not None:
            self._semantic.fill_in_background(user_id)  # the new wording needs its own vector
        return new

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user (another user's id is simply not found)."""
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            item = items.remove(item_id)
            if item is not None:
                await asyncio.to_thread(self._erase, user_id, item)
                if self._semantic is not None:
                    await self._semantic.forget(user_id, {item_id})
                log.info("[Memory] forgot item %s", item_id)
            return item

    async def forget_user(self, user_id: str) -> int:
        """Delete every item of this user, files included; returns how many went.

        Exchanges of this user still being stored in the background are let finish first,
        so that the last thing said before "forget everything" does not outlive it."""
        await self._exchanges_stored(user_id)
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            count = len(items)
            self._loaded.pop(user_id, None)
            await asyncio.to_thread(self._files(user_id).delete_all)
            log.info("[Memory] forgot all %d items of a user", count)
            return count

    async def drain(self) -> None:
        """Wait for writes still running in the background (at shutdown, and in tests)."""
        while self._background or self._load_tasks:
            pending = [*self._background, *self._load_tasks.values()]
            await asyncio.gather(*pending, return_exceptions=True)
        if self._semantic is not None:
            await self._semantic.drain()

    # -- internals --------------------------------------------------------------------------

    async def _embed_meanwhile(
        self, user_id: str, items: UserItems, query: str
    ) -> asyncio.Task[Vectors | None] | None:
        """The question's vector on its way: the embedding thread has it when this returns, so
        a recall pays the longer of embedding and word matching, not their sum (the bundled
        model takes ~15-20 ms of a core; words at 10k items ~5 ms of the loop)."""
        if self._semantic is None or not len(items) or not worth_embedding(query):
            return None
        task = asyncio.create_task(self._query_vector(user_id, items, query))
        await asyncio.sleep(0)  # the task runs up to its hand-over to the thread
        return task

    async def _meaning(self, items: UserItems, vector: Vectors | None) -> dict[str, float] | None:
        """The items nearest to the question's vector; a large user's are searched in a worker
        thread (numpy lets go of the GIL), since the search would pause the loop too long."""
        if vector is None or items.vectors is None:
            return None
        search = items.vectors.search_as_now()
        if len(items.vectors) < SEARCH_IN_THREAD_FROM:
            return nearest_in_meaning(search, vector)
        return await asyncio.to_thread(nearest_in_meaning, search, vector)

    async def _query_vector(self, user_id: str, items: UserItems, query: str) -> Vectors | None:
        """None (words alone) also when the user has no items: a question costs the embedded
        model ~20 ms of a core, which a user with nothing to recall need not pay."""
        if self._semantic is None or not query.strip() or not len(items):
            return None
        return await self._semantic.query_vector(user_id, items, query)

    def _write(self, user_id: str, stored: list[MemoryItem], promoted_ids: set[str]) -> None:
        files = self._files(user_id)
        files.append(stored)
        left_behind: dict[Path, set[str]] = defaultdict(set)
        for item in stored:
            if item.id in promoted_ids:
                left_behind[files.episode_path(item.created_at)].add(item.id)
        for day_file, item_ids in left_behind.items():
            remove_ids(day_file, item_ids)

    def _erase(self, user_id: str, item: MemoryItem) -> None:
        self._erase_many(user_id, [item])

    def _erase_many(self, user_id: str, gone: list[MemoryItem]) -> None:
        files = self._files(user_id)
        by_file: dict[Path, set[str]] = defaultdict(set)
        for item in gone:
            by_file[files.path_for(item)].add(item.id)
            by_file[files.episode_path(item.created_at)].add(item.id)
        for path, item_ids in by_file.items():
            remove_ids(path, item_ids)

    async def _items(self, user_id: str) -> UserItems:
        items = self._loaded.get(user_id)
        if items is not None:
            self._loaded.move_to_end(user_id)
            return items
        async with self._lock(user_id):
            return await self._load_locked(user_id)

    async def _items_for_recall(self, user_id: str) -> tuple[UserItems, bool]:
        """The user's items and True, waiting at most `FIRST_RECALL_WAIT` for a load (see the
        module docstring); else what is in by then and False, with one log line."""
        items = self._loaded.get(user_id)
        if items is not None:
            self._loaded.move_to_end(user_id)
            return items, True
        task = self._load_tasks.get(user_id)
        if task is None:
            task = asyncio.create_task(self._items(user_id), name=f"memory-load:{user_id}")
            self._load_tasks[user_id] = task
            task.add_done_callback(lambda done: self._load_done(user_id, done))
        await asyncio.wait({task}, timeout=self._first_recall_wait)
        if task.done():
            return task.result(), True
        loading = self._loading.get(user_id)
        quick = loading.quick if loading is not None else None
        if quick is None:
            log.info("[Memory] a user's items are still loading; recalled nothing this turn")
            return UserItems(), False
        log.info(
            "[Memory] a user's items are still loading; recalled from their %d facts and "
            "how-tos this turn",
            len(quick),
        )
        return quick, False

    def _load_done(self, user_id: str, task: asyncio.Task[UserItems]) -> None:
        if self._load_tasks.get(user_id) is task:
            del self._load_tasks[user_id]
        if not task.cancelled() and task.exception() is not None:
            log.warning("[Memory] loading a user's items failed: %s", task.exception())

    async def _load_locked(self, user_id: str) -> UserItems:
        items = self._loaded.get(user_id)
        if items is None:
            on_disk = self._files(user_id).directory.exists()
            # A new user: nothing to read, no thread to wait for.
            items = await self._read_in_thread(user_id) if on_disk else UserItems()
            self._loaded[user_id] = items
            while len(self._loaded) > self._cached_users:
                self._loaded.popitem(last=False)
            if on_disk and self._semantic is not None:
                # Their vectors are read as part of the load, not by their first recall.
                self._semantic.fill_in_background(user_id)
        self._loaded.move_to_end(user_id)
        return items

    async def _read_in_thread(self, user_id: str) -> UserItems:
        """`_read` in a worker thread; its facts and how-tos reach `_loading` on the loop."""
        loading = self._loading[user_id] = _Loading()
        loop = asyncio.get_running_loop()

        def hand_over(quick: UserItems) -> None:  # called in the thread, runs on the loop
            loop.call_soon_threadsafe(setattr, loading, "quick", quick)

        try:
            return await asyncio.to_thread(self._read, user_id, self._clock(), hand_over)
        finally:
            if self._loading.get(user_id) is loading:
                del self._loading[user_id]

    def _read(
        self,
        user_id: str,
        now: datetime,
        on_quick: Callable[[UserItems], None] | None = None,
    ) -> UserItems:
        """Load from disk, promoting episodes that became confident enough under a new config.

        Runs in a worker thread (see `read_items`), with full collections paused (see
        `bot/runtime.py`).
        """
        threshold = self._config().promotion_min_confidence
        with full_collections_paused():
            items, ready = read_items(self._files(user_id), now, threshold, on_quick)
            if ready:
                self._write(user_id, ready, {item.id for item in ready})
            settle(len(items))
        return items

    def _files(self, user_id: str) -> UserFiles:
        return self._user_files(self.root, user_id)

    def _lock(self, user_id: str) -> asyncio.Lock:
        return self._locks.setdefault(user_id, asyncio.Lock())


class _Loading:
    """A user's items being read in a worker thread."""

    def __init__(self) -> None:
        self.quick: UserItems | None = None
        """Their facts and how-tos, once the thread has read and indexed them."""


def relaxed_for_search(config: MemoryConfig, limit: int) -> MemoryConfig:
    """`config` for the `memory` tool's search: up to `limit` per layer, any score, any age."""
    return config.model_copy(
        update={
            "min_score": 0.0,
            "semantic_top_k": limit,
            "procedural_top_k": limit,
            "episodic_top_k": limit,
            "lookback_days": 3650,
        }
    )


def same_memory(items: UserItems, new: MemoryItem) -> MemoryItem | None:
    """The kept item `new` repeats: same fingerprint, or (for a fact with a slot) the same words.

    The second look lets "my server is at 10.0.0.5", extracted after the model already stored
    "The user's server is at 10.0.0.5" with the memory tool in the same turn, merge with it.
    """
    found = items.by_fingerprint(new.fingerprint) if new.fingerprint else None
    return found or items.by_fingerprint(fingerprint(new.type, new.content))


def merge(existing: MemoryItem, new: MemoryItem, now: datetime) -> MemoryItem:
    """`new` said again what `existing` holds: one item, newer wording, more confidence."""
    confidence = 1 - (1 - existing.confidence) * (1 - REPEAT_WEIGHT * new.confidence)
    return existing.model_copy(
        update={
            "title": new.title,
            "content": new.content,
            "tags": list(dict.fromkeys([*existing.tags, *new.tags])),
            "source": new.source,
            "confidence": round(min(1.0, confidence), 4),
            "salience": max(existing.salience, new.salience),
            "updated_at": now,
            "ttl_days": new.ttl_days if existing.ttl_days is not None else None,
            "fingerprint": new.fingerprint or existing.fingerprint,
        }
    )
