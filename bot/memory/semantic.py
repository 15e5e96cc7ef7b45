"""Meaning for short-term memory: each item's vector kept beside it, and the question's vector.

Items are embedded in the background as they are stored (and again when their wording
changes); their vectors persist in the user's folder (`bot/memory/vectors.py`), so a restart
never re-embeds what was embedded before. Embeddings down or off never stop a recall: it
answers by words alone, and the items are embedded later, after a back-off. A new embedding
model (`memory.embeddings`) opens a new, empty vector file that fills in the background
while recall goes on by words; the old model's file is deleted once the new one is complete.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from bot.config.model import EmbeddingsConfig
from bot.memory.episodes import EXCHANGE_USER, said_and_answered
from bot.memory.model import ItemType, MemoryItem
from bot.memory.user_items import UserItems
from bot.memory.vectors import VectorFile, VectorIndex
from bot.ports.embeddings import EmbeddingError, EmbeddingPort, Vectors
from bot.retry import Backoff
from bot.small_talk import is_small_talk

log = logging.getLogger(__name__)

BATCH = 64
"""Items embedded per request in the background."""
EMBEDDINGS_BACKOFF = Backoff(first_seconds=5.0, longest_seconds=600.0)
"""How long embeddings rest after consecutive failures, before items are tried again."""
SETTLE_SECONDS = 0.05
"""How long a recall waits for this user's items still being embedded (the embedded model
needs some 20-40 ms per item, in a worker thread; a remote server is not waited for longer)."""


ASKED_BEFORE = 256
"""Questions whose vectors are kept (1.5 kB each with the bundled model): "hi", "thanks",
"what's on my list?" and a question sent again after an error are asked over and over, and
each costs the bundled model ~10-20 ms of a core. An exchange stored after its answer takes
its question's vector from here too (`vectors_of`): 256 questions cover the time an answer
takes at several messages a second; past that, the item is embedded again."""


ASKED_BEFORE_LONGEST = 1000
"""Characters of the longest question kept: repeated questions are short, and 256 pasted
pages as keys would hold megabytes."""


class AskedBefore:
    """The vectors of the latest distinct questions, by model and text; the least recently
    asked goes first. A text has one vector whoever asks, so the cache holds nothing that is
    one user's: a vector is used only for the same words, by the asker's own recall or as the
    vector of the asker's item that says them."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()

    def get(self, model_id: str, text: str) -> Vectors | None:
        vector = self._vectors.get((model_id, text))
        if vector is not None:
            self._vectors.move_to_end((model_id, text))
        return vector

    def put(self, model_id: str, text: str, vector: Vectors) -> None:
        if len(text) > ASKED_BEFORE_LONGEST:
            return
        vector.flags.writeable = False  # shared by every later recall of the same words
        self._vectors[(model_id, text)] = vector
        self._vectors.move_to_end((model_id, text))
        while len(self._vectors) > self._capacity:
            self._vectors.popitem(last=False)


async def vectors_of(
    embedder: EmbeddingPort, asked: AskedBefore, model_id: str, texts: list[str]
) -> Vectors:
    """The vectors of items' `texts`, each embedded once: a text asked as a question moments
    ago (most exchanges are stored in the very words their recall embedded) takes the
    question's vector, and only the others go to the model, in one call. The bundled model
    spends ~10 ms of a core on a chat message, most of what a message costs the bot."""
    known = [asked.get(model_id, text) for text in texts]
    missing = [text for text, vector in zip(texts, known, strict=True) if vector is None]
    if len(missing) == len(texts):
        return await embedder.embed(texts)
    fresh: Iterator[Vectors] = iter(await embedder.embed(missing) if missing else [])
    return np.stack([next(fresh) if vector is None else vector for vector in known])


_ASKS = re.compile(
    r"\?|^(?:what|when|where|who|whose|which|how|why|is|are|am|do|does|did|can|could|"
    r"should|would|will|что|где|когда|кто|как|какой|какая|какие|почему|зачем|сколько)\b",
    re.IGNORECASE,
)


def worth_embedding(message: str) -> bool:
    """Whether a recall for `message` embeds it: not for small talk that asks nothing ("ok
    cool", "just made pasta, nothing fancy", a third of real chat). Such a message stores
    nothing (`items_from_exchange`), so no item will take its vector, and it asks for no
    memory: its words still recall what shares them. A question always is, however
    chatty its words ("where am I from?" is all stop words; only meaning finds "I grew up
    in Porto"). On the memory sets (390 questions) the rule leaves every question embedded."""
    text = message.strip()
    return not is_small_talk(text) or bool(_ASKS.search(text))


def item_text(item: MemoryItem) -> str:
    """What an item says: for a past exchange, the user's own words (the answer around them
    is mostly the assistant's phrasing, which would pull every exchange towards every other)."""
    if item.type is ItemType.EXCHANGE and item.content.startswith(EXCHANGE_USER):
        return said_and_answered(item.content)[0]
    return item.content


class EmbeddingRest:
    """After consecutive failures, embeddings rest (`EMBEDDINGS_BACKOFF`) and memory recalls by
    words meanwhile; one log line when they fail and one when they are back."""

    def __init__(self, timer: Callable[[], float] = time.monotonic) -> None:
        self._timer = timer
        self._failures = 0
        self._resting_until = 0.0

    def resting(self) -> bool:
        return self._timer() < self._resting_until

    def failed(self, exc: BaseException) -> None:
        self._failures += 1
        rest = EMBEDDINGS_BACKOFF.after(self._failures)
        self._resting_until = self._timer() + rest
        reason = str(exc) or type(exc).__name__
        log.warning(
            "[Memory] embeddings failed (%s); recalling by words, trying again in %gs",
            reason,
            rest,
        )

    def succeeded(self) -> None:
        if self._failures:
            log.info("[Memory] embeddings are back")
        self._failures = 0


class SemanticMemory:
    """Opens, fills and searches each user's vectors through an `EmbeddingPort`."""

    def __init__(
        self,
        embedder: EmbeddingPort,
        config: Callable[[], EmbeddingsConfig],
        directory_of: Callable[[str], Path],
        items_of: Callable[[str], UserItems | None],
        lock_of: Callable[[str], asyncio.Lock],
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._embedder = embedder
        self._config = config
        self._directory_of = directory_of
        self._items_of = items_of
        self._lock_of = lock_of
        self._rest = EmbeddingRest(timer)
        self._dimensions: dict[str, int] = {}
        self._filling: dict[str, asyncio.Task[None]] = {}
        self._complete: set[tuple[str, str]] = set()
        """(user, model) pairs whose older models' files are gone already this run."""
        self._asked = AskedBefore(ASKED_BEFORE)

    async def query_vector(self, user_id: str, items: UserItems, query: str) -> Vectors | None:
        """The question's vector, with this user's vectors open; None means "words alone"."""
        model_id = self._embedder.model_id
        if not model_id or self._rest.resting():
            return None
        pending = self._filling.get(user_id)
        if pending is not None and items.without_vectors(1):
            await asyncio.wait({pending}, timeout=SETTLE_SECONDS)
        vector = self._asked.get(model_id, query)
        if vector is None:
            try:
                async with asyncio.timeout(self._config().timeout_seconds):
                    vector = (await self._embedder.embed([query]))[0]
            except (EmbeddingError, TimeoutError) as exc:
                self._rest.failed(exc)
                return None
            self._rest.succeeded()
            self._asked.put(model_id, query, vector)
        self._dimensions[model_id] = vector.shape[0]
        await self._open(user_id, items, model_id)
        self.fill_in_background(user_id)
        return vector

    def fill_in_background(self, user_id: str) -> None:
        """Embed this user's items that have no vector yet; one task per user at a time (a
        fill that has just returned, its callback not yet run, no longer counts)."""
        running = self._filling.get(user_id)
        if not self._embedder.model_id or self._rest.resting():
            return
        if running is not None and not running.done():
            return
        task = asyncio.create_task(self._fill(user_id), name=f"memory-embed:{user_id}")
        self._filling[user_id] = task
        task.add_done_callback(lambda done: self._filled(user_id, done))

    def _filled(self, user_id: str, task: asyncio.Task[None]) -> None:
        """A fill ended: whatever failed in it is one log line, never an exception left in a
        task nobody awaits ("Task exception was never retrieved")."""
        if self._filling.get(user_id) is task:
            del self._filling[user_id]
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("[Memory] embedding items failed: %s: %s", type(exc).__name__, exc)

    async def forget(self, user_id: str, item_ids: set[str]) -> None:
        """Delete these items' vectors from every model's file (call under the user's lock)."""
        await asyncio.to_thread(self._remove_from_files, user_id, item_ids)

    async def drain(self) -> None:
        while self._filling:
            await asyncio.gather(*list(self._filling.values()), return_exceptions=True)

    # -- internals --------------------------------------------------------------------------

    async def _fill(self, user_id: str) -> None:
        while True:
            items = self._items_of(user_id)
            model_id = self._embedder.model_id
            if items is None or not model_id or self._rest.resting():
                return
            if items.vectors is None or items.vectors.model_id != model_id:
                if model_id not in self._dimensions:
                    await self._learn_size_on_disk(user_id, model_id)
                if model_id not in self._dimensions:  # (a recall may have learnt it meanwhile)
                    return  # the first recall learns the model's size and opens the vectors
                await self._open(user_id, items, model_id)
            batch = items.without_vectors(BATCH)
            if not batch:
                await self._drop_other_models(user_id, items)
                return
            try:
                texts = [item_text(item) for item in batch]
                vectors = await vectors_of(self._embedder, self._asked, model_id, texts)
            except EmbeddingError as exc:
                self._rest.failed(exc)
                return
            self._rest.succeeded()
            await self._store(user_id, items, model_id, batch, vectors)

    async def _store(
        self,
        user_id: str,
        items: UserItems,
        model_id: str,
        batch: list[MemoryItem],
        vectors: Vectors,
    ) -> None:
        index = items.vectors
        if index is None or index.model_id != model_id or self._embedder.model_id != model_id:
            return  # the model changed meanwhile: these vectors belong to no open index
        file = VectorFile.of(self._directory_of(user_id), model_id, index.dimensions)
        async with self._lock_of(user_id):
            if self._items_of(user_id) is not items:
                return  # forgotten (or evicted) while being embedded: nothing may be written
            ids, kept = items.embedded(batch, vectors)
            await asyncio.to_thread(file.append, ids, kept)

    async def _open(self, user_id: str, items: UserItems, model_id: str) -> None:
        if items.vectors is not None and items.vectors.model_id == model_id:
            return
        dimensions = self._dimensions[model_id]
        file = VectorFile.of(self._directory_of(user_id), model_id, dimensions)
        async with self._lock_of(user_id):
            if items.vectors is not None and items.vectors.model_id == model_id:
                return
            # Held lock: no write changes the items while the thread reads their vectors.
            wanted = list(items.items)
            index, missing = await asyncio.to_thread(_read_index, file, model_id, wanted)
            items.open_vectors(index, missing)

    async def _learn_size_on_disk(self, user_id: str, model_id: str) -> None:
        """Learn the model's vector size from this user's file of it, if there is one: after
        a restart, before any question was embedded, a fill can then open the vectors."""
        directory = self._directory_of(user_id)

        def size() -> int | None:
            for file in VectorFile.every(directory):
                if VectorFile.of(directory, model_id, file.dimensions).path == file.path:
                    return file.dimensions
            return None

        found = await asyncio.to_thread(size)
        if found is not None:
            self._dimensions.setdefault(model_id, found)

    async def _drop_other_models(self, user_id: str, items: UserItems) -> None:
        """Once per user and model and run: a fill after every turn need not list the folder."""
        index = items.vectors
        if index is None or (user_id, index.model_id) in self._complete:
            return
        self._complete.add((user_id, index.model_id))
        current = VectorFile.of(self._directory_of(user_id), index.model_id, index.dimensions)
        for file in VectorFile.every(self._directory_of(user_id)):
            if file.path != current.path:
                file.path.unlink(missing_ok=True)
                log.info("[Memory] deleted the vectors of a previous embedding model")

    def _remove_from_files(self, user_id: str, item_ids: set[str]) -> None:
        for file in VectorFile.every(self._directory_of(user_id)):
            file.remove(item_ids)


def _read_index(
    file: VectorFile, model_id: str, wanted: list[str]
) -> tuple[VectorIndex, list[str]]:
    """The vectors of `wanted` items in `file`, indexed, and the items without one (in a
    worker thread: 100k rows would pause the event loop)."""
    ids, vectors = file.load(set(wanted))
    index = VectorIndex.of(model_id, file.dimensions, ids, vectors)
    return index, [item_id for item_id in wanted if item_id not in index]
