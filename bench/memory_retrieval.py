"""Retrieval + packing latency of short-term memory at 1k, 10k and 100k items of one user.

Items are synthetic but shaped like real ones: 80% episodes of 40-60 words, 15% facts of
8-15 words, 5% how-tos, over a Zipf-distributed vocabulary of 30k words, so common words have
long postings as they would in real text. Queries of 4-10 words are drawn from the same
distribution. Each figure is `MemoryService.recall` over files end to end (the question
embedded by the bundled e5 model in a worker thread, candidates by BM25 and by cosine over every
item's vector, fusion, scoring, top-k, packing, rendering) on a warm user, beside the same recall by
words alone (embeddings off) in the same run. The items' vectors are random unit vectors of
the model's size, written under its id: what a search over them costs does not depend on
their values, and embedding 100k items for real would take the bundled model most of an
hour. The cold start is reported apart: the first recall (which waits for the load in a
worker thread at most `FIRST_RECALL_WAIT`, then answers from the facts and how-tos read
first), the time until every item is in and a recall has opened their vectors, and the
longest pause all of it caused to the event loop, i.e. to every other chat. The made-up
words of the queries split into many more of the model's tokens than real words do, so the
recall is timed again on the evaluation set's questions (152, each asked once: a question
asked again takes its vector from a cache), which share no word with the items: their
figure holds a real question's embedding, the other the cost of many word matches. Sizes run in
one process, so machine noise hits all alike; compare the growth factors rather than
absolute times.

    python -m bench.memory_retrieval [--queries 200] [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import accumulate, pairwise
from pathlib import Path

import numpy as np

from bench.memory_eval_data import load_eval_set
from bench.report import Figure, median, percentile, print_table
from bot.adapters.embeddings.embedded import DIMENSIONS, EmbeddedEmbedder
from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.files import UserFiles
from bot.memory.model import ItemType, Layer, MemoryItem, fingerprint
from bot.memory.service import MemoryService
from bot.memory.vectors import VectorFile
from bot.ports.embeddings import unit_rows

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
USER = "bench-user"
VOCABULARY = 30_000
SHAPES = [
    (0.80, Layer.EPISODIC, ItemType.EXCHANGE, (40, 60)),
    (0.15, Layer.SEMANTIC, ItemType.FACT, (8, 15)),
    (0.05, Layer.PROCEDURAL, ItemType.HOWTO, (12, 20)),
]
TARGET_P95_10K_MS = 20.0
TARGET_COLD_MS = 1_000.0
"""The first recall of a user, whatever their size (it waits for their load at most 0.8 s)."""
TARGET_PAUSE_MS = 50.0
"""The longest the event loop (every other chat) may stall while a user's items load."""


class Words:
    """Pronounceable made-up words with Zipf frequencies, the same for every run."""

    def __init__(self, rng: random.Random) -> None:
        syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        self.words = sorted(words)
        rng.shuffle(self.words)
        self.cumulative = list(accumulate(1 / (rank + 1) ** 1.07 for rank in range(VOCABULARY)))
        self.rng = rng

    def sample(self, count: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=count))


def synthetic_items(count: int, words: Words, rng: random.Random) -> list[MemoryItem]:
    items = []
    for n in range(count):
        layer, item_type, (low, high) = _shape(rng.random())
        content = words.sample(rng.randint(low, high))
        at = NOW - timedelta(days=rng.uniform(0, 20), seconds=n)
        items.append(
            MemoryItem(
                layer=layer,
                type=item_type,
                title=content[:60],
                content=content,
                # Episodes this confident would have been promoted already.
                confidence=rng.uniform(0.5, 0.75 if layer is Layer.EPISODIC else 0.95),
                salience=rng.uniform(0.3, 0.9),
                created_at=at,
                updated_at=at,
                ttl_days=90 if layer is Layer.EPISODIC else None,
                fingerprint=fingerprint(item_type, content),
            )
        )
    return items


def _shape(roll: float) -> tuple[Layer, ItemType, tuple[int, int]]:
    for share, layer, item_type, words in SHAPES:
        if roll <= share:
            return layer, item_type, words
        roll -= share
    return SHAPES[0][1:]


def write_files(
    root: Path, items: list[MemoryItem], embedder: EmbeddedEmbedder | None, rng: random.Random
) -> None:
    """The user's item files, and (with an embedder) vectors as memory keeps them after
    embedding: random unit vectors under the embedder's model id."""
    files = UserFiles(root, USER)
    by_path: dict[Path, list[MemoryItem]] = defaultdict(list)
    for item in items:
        by_path[files.path_for(item)].append(item)
    for path, group in by_path.items():
        files.rewrite(path, group)
    if embedder is None:
        return
    vectors = unit_rows(
        np.random.default_rng(rng.randrange(2**32)).normal(size=(len(items), DIMENSIONS))
    )
    VectorFile.of(files.directory, embedder.model_id, DIMENSIONS).append(
        [item.id for item in items], vectors
    )


async def measure_size(
    size: int, queries: list[str], words: Words, rng: random.Random, meaning: bool
) -> tuple[float, float, float, list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        embedder = EmbeddedEmbedder() if meaning else None
        if embedder is not None:
            await embedder.warm_up()  # as the bot does at start
        write_files(root, synthetic_items(size, words, rng), embedder, rng)
        memory = file_memory(root, MemoryConfig, clock=lambda: NOW, embedder=embedder)
        loop_pauses: list[float] = []
        beat = asyncio.create_task(_heartbeat(loop_pauses))
        started = time.perf_counter()
        await memory.recall(USER, queries[0])
        cold_ms = (time.perf_counter() - started) * 1000
        await memory.search(USER, queries[0])  # waits for every item, opens their vectors
        loaded_ms = (time.perf_counter() - started) * 1000
        await asyncio.sleep(0.01)  # the heartbeat records a pause the last step caused
        beat.cancel()
        times = await _timed_recalls(memory, queries[1:])  # the first one's vector is cached
        asked = await _timed_recalls(memory, _questions()) if meaning else []
        return cold_ms, loaded_ms, max(loop_pauses, default=0.0), times, asked


async def _timed_recalls(memory: MemoryService, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        await memory.recall(USER, query)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _questions() -> list[str]:
    """The evaluation set's questions, each once: as people ask them (a question's vector is
    kept after it is asked, so a repeated question would cost no embedding)."""
    data = load_eval_set()
    return list(dict.fromkeys(q for fact in data.facts for q in (fact.natural, fact.paraphrase)))


async def _heartbeat(pauses: list[float], every: float = 0.001) -> None:
    """Wakes every millisecond and records how late it woke (ms): what other chats feel."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(every)
        pauses.append((time.perf_counter() - before - every) * 1000)


async def measure(sizes: list[int], query_count: int) -> list[Figure]:
    rng = random.Random(7)
    words = Words(rng)
    queries = [words.sample(rng.randint(4, 10)) for _ in range(query_count)]
    name = "memory retrieval"
    figures = await question_embedding(name)
    p95: dict[int, float] = {}
    for size in sizes:
        label = f"{size // 1000}k items"
        _, _, _, words_only, _ = await measure_size(
            size, queries, words, random.Random(size), False
        )
        figures.append(
            Figure(
                name,
                f"{label}: recall + pack p95, words only",
                percentile(words_only, 95),
                "ms",
                "",
            )
        )
        measured = await measure_size(size, queries, words, random.Random(size), True)
        cold_ms, loaded_ms, longest_pause_ms, times, asked = measured
        p95[size] = percentile(times, 95)
        figures.append(
            Figure(
                name,
                f"{label}: recall + pack p95, questions as people ask them",
                percentile(asked, 95),
                "ms",
                "",
            )
        )
        figures.append(Figure(name, f"{label}: recall + pack p50", median(times), "ms", ""))
        target = f"< {TARGET_P95_10K_MS:g} ms" if size == 10_000 else ""
        met = p95[size] < TARGET_P95_10K_MS if size == 10_000 else None
        figures.append(Figure(name, f"{label}: recall + pack p95", p95[size], "ms", target, met))
        cold, target = f"{label}: first recall (cold)", f"<= {TARGET_COLD_MS:g} ms"
        figures.append(Figure(name, cold, cold_ms, "ms", target, cold_ms <= TARGET_COLD_MS))
        loaded = f"{label}: every item in, vectors open"
        figures.append(Figure(name, loaded, loaded_ms, "ms", ""))
        pause, target = (
            f"{label}: longest event-loop pause until then",
            f"<= {TARGET_PAUSE_MS:g} ms",
        )
        met = longest_pause_ms <= TARGET_PAUSE_MS
        figures.append(Figure(name, pause, longest_pause_ms, "ms", target, met))
    for smaller, larger in pairwise(sizes):
        growth = p95[larger] / p95[smaller]
        items_ratio = larger / smaller
        figures.append(
            Figure(
                name,
                f"p95 growth {smaller // 1000}k -> {larger // 1000}k items",
                growth,
                "x",
                f"< {items_ratio:g}x (sub-linear)",
                growth < items_ratio,
            )
        )
    return figures


async def question_embedding(name: str) -> list[Figure]:
    """What the bundled model alone adds to a recall, on questions as people ask them (the
    evaluation set's): the synthetic queries above are made-up words, split into many more
    tokens than real words, so their embedding costs more than a real question's."""
    embedder = EmbeddedEmbedder()
    await embedder.warm_up()
    questions = _questions()
    times = []
    for question in questions:
        started = time.perf_counter()
        await embedder.embed([question])
        times.append((time.perf_counter() - started) * 1000)
    embedder.close()
    label = f"a question embedded alone ({len(questions)} of the evaluation set)"
    return [
        Figure(name, f"{label} p50", median(times), "ms", ""),
        Figure(name, f"{label} p95", percentile(times, 95), "ms", ""),
    ]


def run(sizes: tuple[int, ...] = (1_000, 10_000, 100_000), queries: int = 200) -> list[Figure]:
    return asyncio.run(measure(list(sizes), queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    print_table(run(tuple(args.sizes), args.queries))


if __name__ == "__main__":
    main()
