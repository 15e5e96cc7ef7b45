"""The bundled e5 model: it runs with no network, finds paraphrases in English and Russian,
never pauses the event loop, and turns any text a user sends into a unit vector."""

import asyncio
import os
import socket
import threading

import numpy as np
import pytest

from bot.adapters.embeddings import embedded
from bot.adapters.embeddings.embedded import DIMENSIONS, EmbeddedEmbedder, embed_with, load_e5

TEXTS = [
    "btw my sister Olga lives in Porto",
    "which town is my sibling based in?",
    "у нас живёт кот Барсик, ему уже 12",
    "k8s",
]


@pytest.fixture(scope="module")
def model():
    return load_e5()


def test_vectors_are_unit_rows_of_the_models_size(model):
    vectors = embed_with(model, TEXTS)
    assert vectors.shape == (len(TEXTS), DIMENSIONS)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_batch_embeds_each_text_as_if_alone(model):
    """Texts of different lengths in one call must not leak into each other."""
    together = embed_with(model, TEXTS)
    alone = np.vstack([embed_with(model, [text]) for text in TEXTS])
    assert np.allclose(together, alone, atol=1e-4)


def test_odd_texts_still_get_a_vector(model):
    """Empty, NUL bytes, a lone surrogate, a pasted page: a vector each, never an error."""
    odd = ["", "a\x00b", "broken \ud800 surrogate", "word " * 5000]
    vectors = embed_with(model, odd)
    assert vectors.shape == (len(odd), DIMENSIONS)
    assert np.isfinite(vectors).all()
    assert embed_with(model, []).shape == (0, DIMENSIONS)


def test_only_the_start_of_a_long_text_is_embedded(model):
    start = "my sister Olga lives in Porto. " * 40
    longer = embed_with(model, [start[: embedded.MAX_CHARACTERS], start + "unrelated " * 900])
    assert np.allclose(longer[0], longer[1], atol=1e-5)


@pytest.mark.parametrize(
    ("fact", "other", "question"),
    [
        (
            "btw my sister Olga lives in Porto",
            "I bought a used Yamaha piano last month",
            "which town is my sibling based in?",
        ),
        (
            "моя сестра Ольга живёт в Порту",
            "в прошлом месяце я купил подержанное пианино",
            "в каком городе обитает моя родственница?",
        ),
    ],
)
def test_a_paraphrase_is_nearest_to_its_fact(model, fact, other, question):
    vectors = embed_with(model, [fact, other, question])
    assert float(vectors[2] @ vectors[0]) > float(vectors[2] @ vectors[1])


def test_loading_and_embedding_open_no_socket(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the embedded model tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    load_e5.cache_clear()
    try:
        vectors = embed_with(load_e5(), ["we have a beagle called Biscuit"])
    finally:
        load_e5.cache_clear()
    assert vectors.shape == (1, DIMENSIONS)


async def test_the_adapter_embeds_in_a_worker_thread(monkeypatch):
    """~15 ms of C per question: on the loop it would stall every other chat."""
    threads: list[int] = []

    class Recording:
        def query(self, texts):
            threads.append(threading.get_ident())
            return np.ones((len(texts), DIMENSIONS), dtype=np.float32)

    monkeypatch.setattr(embedded, "load_e5", Recording)
    vectors = await EmbeddedEmbedder().embed(["hello there"])
    assert vectors.shape == (1, DIMENSIONS)
    assert threads and threads[0] != threading.get_ident()


class Gated:
    """A model whose calls wait for `release`; each row points along its text's length."""

    calls: list[list[str]]
    started: threading.Event
    release: threading.Event

    def query(self, texts):
        self.calls.append(list(texts))
        self.started.set()
        assert self.release.wait(10), "the test never released the model"
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        rows[range(len(texts)), [len(text) for text in texts]] = 1.0
        return rows


@pytest.fixture
def gated(monkeypatch):
    Gated.calls, Gated.started, Gated.release = [], threading.Event(), threading.Event()
    monkeypatch.setattr(embedded, "load_e5", Gated)
    yield Gated
    Gated.release.set()


async def test_questions_asked_while_the_thread_is_busy_are_embedded_in_one_call(gated):
    """Many chats at once: the questions that queued behind one call go in the next together
    (cheaper per text); one whose asker gave up is left out."""
    embedder = EmbeddedEmbedder()
    first = asyncio.create_task(embedder.embed(["one"]))
    assert await asyncio.to_thread(gated.started.wait, 10)
    texts = ["two!", "three", "four..."]
    queued = [asyncio.create_task(embedder.embed([text])) for text in texts]
    gone = asyncio.create_task(embedder.embed(["timed out"]))
    await asyncio.sleep(0)  # each task runs up to waiting for its vector
    gone.cancel()
    gated.release.set()
    vectors = await asyncio.gather(first, *queued)
    assert gated.calls == [["one"], texts]
    assert [int(np.argmax(vector)) for vector in vectors] == [3, 4, 5, 7]
    assert all(vector.shape == (1, DIMENSIONS) for vector in vectors)
    embedder.close()


async def test_closing_fails_the_questions_still_waiting(gated):
    embedder = EmbeddedEmbedder()
    first = asyncio.create_task(embedder.embed(["one"]))
    assert await asyncio.to_thread(gated.started.wait, 10)
    waiting = asyncio.create_task(embedder.embed(["two"]))
    await asyncio.sleep(0)
    embedder.close()
    with pytest.raises(embedded.EmbeddingError, match="closed"):
        await waiting
    gated.release.set()
    assert (await first).shape == (1, DIMENSIONS)  # the call under way still answers
    with pytest.raises(embedded.EmbeddingError, match="closed"):
        await embedder.embed(["three"])


async def test_a_model_that_cannot_load_raises_an_embedding_error(monkeypatch):
    def broken():
        raise OSError("engine missing")

    monkeypatch.setattr(embedded, "load_e5", broken)
    embedder = EmbeddedEmbedder()
    with pytest.raises(embedded.EmbeddingError, match="engine missing"):
        await embedder.embed(["hello"])


@pytest.mark.parametrize("before", [None, "7"])
def test_loading_leaves_omp_num_threads_as_it_was(monkeypatch, before):
    """The engine is loaded with one OpenMP thread; the bot's children must not inherit it."""
    if before is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", before)
    load_e5.cache_clear()
    try:
        load_e5()
    finally:
        load_e5.cache_clear()
    assert os.environ.get("OMP_NUM_THREADS") == before
