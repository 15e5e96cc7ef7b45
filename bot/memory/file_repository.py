"""Short-term memory items in per-user JSONL files under one folder: the `MemoryRepository`
of a bot without `DATABASE_URL`.

Each user's items live in their own files (`UserFiles`) and, once used, in memory
(`UserItems`, an LRU of recently active users), ranked there. A per-user lock makes one writer
per user's files at a time; different users never wait for each other. Reads need no lock once
a user is loaded: every change updates the in-memory items on the event loop before its fsync
starts, so the next turn sees it at once.

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
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.documents import is_part_of
from bot.memory.file_vectors import FileVectors
from bot.memory.files import UserFiles, append_items, erase_items, remove_ids
from bot.memory.loading import read_items
from bot.memory.model import FACT_LAYERS, Layer, MemoryItem
from bot.memory.repository import Embedded, Question
from bot.memory.retention import expired_by, ttl_applies
from bot.memory.scoring import PROFILE_TOP_K, Candidates, nearest_in_meaning, word_matches
from bot.memory.service import MemoryService
from bot.memory.user_items import UserItems
from bot.ports.embeddings import EmbeddingPort, Vectors
from bot.runtime import full_collections_paused, settle

log = logging.getLogger(__name__)

FIRST_RECALL_WAIT = 0.8
"""Seconds a recall waits for a user's items still loading (100k items take seconds) before it
answers from what is in already: their facts and how-tos, or nothing."""

SEARCH_IN_THREAD_FROM = 20_000
"""Vectors from which a recall searches them in a worker thread: 100k take 15-40 ms, a pause
every other chat would feel; 10k take 1-4 ms, too little to be worth a hop to a thread."""


def file_memory(
    root: Path,
    config: Callable[[], MemoryConfig],
    clock: Callable[[], datetime] = utc_now,
    embedder: EmbeddingPort | None = None,
    timer: Callable[[], float] = time.monotonic,
    first_recall_wait: float = FIRST_RECALL_WAIT,
    user_files: Callable[[Path, str], UserFiles] = UserFiles,
    cached_users: int = 64,
) -> MemoryService:
    """Short-term memory in per-user files under `root`."""
    repository = FileRepository(root, config, clock, cached_users, first_recall_wait, user_files)
    service = MemoryService(repository, config, clock, embedder, timer)
    repository.on_load(service.embed_missing)
    return service


class FileRepository:
    """`MemoryRepository` over per-user JSONL files under `root`, for one process."""

    def __init__(
        self,
        root: Path,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], datetime],
        cached_users: int = 64,
        first_recall_wait: float = FIRST_RECALL_WAIT,
        user_files: Callable[[Path, str], UserFiles] = UserFiles,
    ) -> None:
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
        self._vectors = FileVectors(
            lambda user_id: self._files(user_id).directory, self._loaded.get, self._lock
        )
        self._on_load: Callable[[str], None] = lambda user_id: None

    def on_load(self, call: Callable[[str], None]) -> None:
        """`call(user_id)` once a user's items are read from their files: the service embeds
        what lacks a vector, which first reads their vectors, ahead of their first recall."""
        self._on_load = call

    # -- reading ----------------------------------------------------------------------------

    async def candidates(
        self, user_id: str, question: Question, now: datetime, config: MemoryConfig
    ) -> Candidates:
        """Every item of the user, the words matched on the loop while a thread embeds the
        question. Vectors open only over a user's whole set of items."""
        if question.recall:
            items, whole = await self._items_for_recall(user_id)
        else:
            items, whole = await self._items(user_id), True
        embedding = await self._embed_meanwhile(user_id, items, question) if whole else None
        words = word_matches(items, question.text)
        vector = await embedding if embedding is not None else None
        meaning = await self._meaning(items, vector)
        return Candidates(
            lexical=words,
            nearest=meaning or {},
            items=items.items,
            profile=items.strongest(PROFILE_TOP_K * 3),
        )

    async def live_items(self, user_id: str, now: datetime) -> list[MemoryItem]:
        """In no particular order."""
        config = self._config()
        return [i for i in await self._items(user_id) if not expired_by(i, now, config)]

    async def count(self, user_id: str, now: datetime) -> int:
        config = self._config()
        return sum(1 for i in await self._items(user_id) if not expired_by(i, now, config))

    async def recent_facts(self, user_id: str, now: datetime, limit: int) -> list[MemoryItem]:
        items = await self._items(user_id)
        others = (items.get(item_id) for item_id in [*items.newest(limit), *items.strongest(limit)])
        found = {i.id: i for i in others if i is not None and i.layer in FACT_LAYERS}
        return list(found.values())

    async def parts_of(self, user_id: str, document_id: str) -> list[MemoryItem]:
        items = await self._items(user_id)
        return sorted((i for i in items if is_part_of(i, document_id)), key=lambda i: i.id)

    # -- writing ----------------------------------------------------------------------------

    @asynccontextmanager
    async def writing(self, user_id: str, retry: bool = False) -> AsyncIterator[_FileOwner]:
        """The user's items, loaded, under their lock (files are never away: no `retry`)."""
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            yield _FileOwner(self._files(user_id), items, self._vectors, user_id)

    async def forget_many(self, user_id: str, item_ids: Collection[str]) -> list[MemoryItem]:
        """One rewrite per file the items were in."""
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            gone = [item for item_id in item_ids if (item := items.remove(item_id)) is not None]
            if gone:
                await asyncio.to_thread(erase_items, self._files(user_id), gone)
                await self._vectors.forget(user_id, {item.id for item in gone})
            return gone

    async def forget_user(self, user_id: str) -> int:
        """Every item of the user goes, files and vectors included."""
        async with self._lock(user_id):
            items = await self._load_locked(user_id)
            count = len(items)
            self._loaded.pop(user_id, None)
            await asyncio.to_thread(self._files(user_id).delete_all)
            return count

    # -- vectors ----------------------------------------------------------------------------

    async def unembedded(self, user_id: str, model_id: str, limit: int) -> list[MemoryItem]:
        return await self._vectors.unembedded(user_id, model_id, limit)

    async def store_vectors(
        self, user_id: str, model_id: str, batch: list[MemoryItem], vectors: Vectors
    ) -> None:
        await self._vectors.store(user_id, model_id, batch, vectors)

    def pending(self) -> list[Awaitable[object]]:
        """Users' items still being read."""
        return list(self._load_tasks.values())

    # -- internals --------------------------------------------------------------------------

    async def _embed_meanwhile(
        self, user_id: str, items: UserItems, question: Question
    ) -> asyncio.Task[Vectors | None] | None:
        """The question's vector on its way: the embedding thread has it when this returns, so
        a recall pays the longer of embedding and word matching, not their sum (the bundled
        model takes ~15-20 ms of a core; words at 10k items ~5 ms of the loop). None (words
        alone) when the user has no items: a question costs the embedded model ~20 ms of a
        core, which a user with nothing to recall need not pay."""
        if not question.embeds or not question.text.strip() or not len(items):
            return None
        task = asyncio.create_task(self._query_vector(user_id, items, question))
        await asyncio.sleep(0)  # the task runs up to its hand-over to the thread
        return task

    async def _query_vector(
        self, user_id: str, items: UserItems, question: Question
    ) -> Vectors | None:
        """The question's vector, with this user's vectors of its model open."""
        embedded: Embedded | None = await question.vector(bool(items.without_vectors(1)))
        if embedded is None:
            return None
        await self._vectors.opened(user_id, items, embedded.model_id, embedded.vector)
        question.vectors_opened()
        return embedded.vector

    async def _meaning(self, items: UserItems, vector: Vectors | None) -> dict[str, float] | None:
        """The items nearest to the question's vector; a large user's are searched in a worker
        thread (numpy lets go of the GIL), since the search would pause the loop too long."""
        if vector is None or items.vectors is None:
            return None
        search = items.vectors.search_as_now()
        if len(items.vectors) < SEARCH_IN_THREAD_FROM:
            return nearest_in_meaning(search, vector)
        return await asyncio.to_thread(nearest_in_meaning, search, vector)

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
            self._let_go_of_idle_users(keep=user_id)
            if on_disk:
                self._on_load(user_id)
        self._loaded.move_to_end(user_id)
        return items

    def _let_go_of_idle_users(self, keep: str) -> None:
        """Past `cached_users` users or `memory.loadedItems` items in RAM, the users idle
        longest are let go (their files stay; a later turn reads them again), never `keep`."""
        budget, held = self._config().loaded_items, sum(map(len, self._loaded.values()))
        while len(self._loaded) > 1 and (len(self._loaded) > self._cached_users or held > budget):
            oldest = next(iter(self._loaded))
            if oldest == keep:
                break
            held -= len(self._loaded.pop(oldest))

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
        `bot/runtime.py`). While the config sets no TTL, stored ones are cleared.
        """
        config = self._config()
        threshold, stored_ttl = config.promotion_min_confidence, ttl_applies(config)
        with full_collections_paused():
            items, ready = read_items(self._files(user_id), now, threshold, on_quick, stored_ttl)
            if ready:
                append_items(self._files(user_id), ready, {item.id for item in ready})
            settle(len(items))
        return items

    def _files(self, user_id: str) -> UserFiles:
        return self._user_files(self.root, user_id)

    def _lock(self, user_id: str) -> asyncio.Lock:
        return self._locks.setdefault(user_id, asyncio.Lock())


class _FileOwner:
    """One user's loaded items and files, while `FileRepository.writing` holds their lock."""

    def __init__(
        self, files: UserFiles, items: UserItems, vectors: FileVectors, user_id: str
    ) -> None:
        self._files = files
        self._items = items
        self._vectors = vectors
        self._user_id = user_id

    async def kept(self, fingerprints: list[str], now: datetime) -> dict[str, MemoryItem]:
        found = ((fp, self._items.by_fingerprint(fp)) for fp in fingerprints)
        return {fp: item for fp, item in found if item is not None}

    async def get(self, item_id: str) -> MemoryItem | None:
        return self._items.get(item_id)

    async def put(self, items: list[MemoryItem], promoted_ids: set[str]) -> None:
        """In memory on the loop first, then appended to the files in a worker thread. An item
        moving to another layer is appended to its new file before the old file loses it, so a
        crash keeps one of the two (a promoted item leaves its day file in `append_items`)."""
        files = self._files
        old = {
            item.id: found
            for item in items
            if item.id not in promoted_ids and (found := self._items.get(item.id))
        }
        for item in items:
            self._items.put(item)

        def write() -> None:
            append_items(files, items, promoted_ids)
            for item in items:
                before = old.get(item.id)
                if before is not None and files.path_for(before) != files.path_for(item):
                    remove_ids(files.path_for(before), {item.id})

        await asyncio.to_thread(write)

    async def tidy(self, now: datetime, max_episodes: int, expire: bool) -> None:
        """Keep at most `max_episodes`: a long life is kept whole, bounded by count rather
        than age (what expired went when the user's files were read). Past the cap, the
        episodes updated longest ago go, a tenth of the cap at once, so that a day file is
        rewritten once per many turns rather than every turn."""
        items = self._items
        if items.count(Layer.EPISODIC) <= max_episodes:
            return
        excess = items.count(Layer.EPISODIC) - max_episodes + max(1, max_episodes // 10)
        gone = [item for i in items.oldest(Layer.EPISODIC, excess) if (item := items.remove(i))]
        await asyncio.to_thread(erase_items, self._files, gone)
        await self._vectors.forget(self._user_id, {item.id for item in gone})
        log.info("[Memory] past %d episodes: the %d oldest went", max_episodes, len(gone))


class _Loading:
    """A user's items being read in a worker thread."""

    def __init__(self) -> None:
        self.quick: UserItems | None = None
        """Their facts and how-tos, once the thread has read and indexed them."""
