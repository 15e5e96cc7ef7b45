"""Meaning for short-term memory, on either repository: the question's vector, and each item's,
embedded in the background.

Items are embedded in the background as they are stored (and again when their wording
changes); the repository keeps their vectors (the user's folder, `bot/memory/file_vectors.py`,
or the item's row), so a restart never re-embeds what was embedded before. Embeddings down or
off never stop a recall: it answers by words alone, and the items are embedded later, after a
back-off.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

import numpy as np

from bot.config.model import EmbeddingsConfig
from bot.memory.episodes import item_text
from bot.memory.repository import Embedded, MemoryRepository
from bot.ports.embeddings import EmbeddingError, EmbeddingPort, Vectors
from bot.ports.health import StoreDown
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


class Embeddings:
    """The question's vector and the background embedding of a repository's items, for either
    repository: one rest after failures, one cache of asked questions, one fill per owner."""

    def __init__(
        self,
        embedder: EmbeddingPort | None,
        config: Callable[[], EmbeddingsConfig],
        repository: MemoryRepository,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._embedder = embedder
        self._config = config
        self._repository = repository
        self._rest = EmbeddingRest(timer)
        self._asked = AskedBefore(ASKED_BEFORE)
        self._filling: dict[str, asyncio.Task[None]] = {}

    @property
    def embeds(self) -> bool:
        """False without an embedder: no question and no item ever has a vector."""
        return self._embedder is not None

    async def query_vector(self, user_id: str, query: str, settle: bool) -> Embedded | None:
        """The question's vector; None ("words alone") while embeddings are off or resting.

        `settle`: the repository knows some of this user's items lack a vector; a fill under
        way gets `SETTLE_SECONDS` to give them one before the question is embedded."""
        embedder = self._embedder
        if embedder is None or not query.strip():
            return None
        model_id = embedder.model_id
        if not model_id or self._rest.resting():
            return None
        pending = self._filling.get(user_id)
        if settle and pending is not None:
            await asyncio.wait({pending}, timeout=SETTLE_SECONDS)
        vector = self._asked.get(model_id, query)
        if vector is None:
            try:
                async with asyncio.timeout(self._config().timeout_seconds):
                    vector = (await embedder.embed([query]))[0]
            except (EmbeddingError, TimeoutError) as exc:
                self._rest.failed(exc)
                return None
            self._rest.succeeded()
            self._asked.put(model_id, query, vector)
        return Embedded(model_id, vector)

    def fill_in_background(self, user_id: str) -> None:
        """Embed this user's items that lack a vector of the current model; one task per user
        at a time (a fill that has just returned, its callback not yet run, no longer counts)."""
        embedder = self._embedder
        if embedder is None or not embedder.model_id or self._rest.resting():
            return
        running = self._filling.get(user_id)
        if running is not None and not running.done():
            return
        task = asyncio.create_task(self._fill(user_id, embedder), name=f"memory-embed:{user_id}")
        self._filling[user_id] = task
        task.add_done_callback(lambda done: self._filled(user_id, done))

    def pending(self) -> list[asyncio.Task[None]]:
        """The fills still running."""
        return list(self._filling.values())

    def _filled(self, user_id: str, task: asyncio.Task[None]) -> None:
        """A fill ended: whatever failed in it is one log line, never an exception left in a
        task nobody awaits ("Task exception was never retrieved")."""
        if self._filling.get(user_id) is task:
            del self._filling[user_id]
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("[Memory] embedding items failed: %s: %s", type(exc).__name__, exc)

    async def _fill(self, user_id: str, embedder: EmbeddingPort) -> None:
        while (model_id := embedder.model_id) and not self._rest.resting():
            try:
                batch = await self._repository.unembedded(user_id, model_id, BATCH)
                if not batch:
                    return
                texts = [item_text(item) for item in batch]
                vectors = await vectors_of(embedder, self._asked, model_id, texts)
                self._rest.succeeded()
                if embedder.model_id != model_id:
                    continue  # the model changed meanwhile: these vectors belong to no index
                await self._repository.store_vectors(user_id, model_id, batch, vectors)
            except EmbeddingError as exc:
                self._rest.failed(exc)
                return
            except StoreDown:
                return  # embedded later, after the next write
