"""Recall from PostgreSQL against the file store, in one run: `python -m bench.memory_postgres`.

The same items (a Zipf vocabulary, as people's words are: a few everywhere, most rare) go
into the file and PostgreSQL repositories of `MemoryService` on a throwaway local PostgreSQL
(`tests/fakes/postgres.py`, Debian's binaries); the same questions are asked of each, words
only. The figures are times of `recall` end to end, and PostgreSQL's as a ratio of the file
store's, which answers from memory: the price of state every process shares.
"""

from __future__ import annotations

import asyncio
import logging
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.report import Figure, median, percentile, print_table
from bot.adapters.postgres.database import Database
from bot.adapters.postgres.memory import postgres_memory
from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.model import ItemType, MemoryItem, new_item
from bot.memory.service import MemoryService
from tests.fakes.postgres import PostgresServer

NAME = "memory_postgres"
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
VOCABULARY = [f"word{rank}" for rank in range(5_000)]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
WORDS_PER_ITEM = 12
BATCH = 1_000


def items(count: int) -> list[MemoryItem]:
    """Three exchanges to one fact, as a chatty user's memory holds them."""
    chosen = random.Random(7)
    made = []
    for at in range(count):
        text = " ".join(chosen.choices(VOCABULARY, WEIGHTS, k=WORDS_PER_ITEM)) + f" note{at}"
        kind = ItemType.EXCHANGE if at % 4 else ItemType.FACT
        ttl = 90 if kind is ItemType.EXCHANGE else None
        made.append(new_item(kind, text, source="bench", confidence=0.5, now=NOW, ttl_days=ttl))
    return made


async def recall_times(store: MemoryService, questions: list[str]) -> list[float]:
    times = []
    for question in questions:
        started = time.perf_counter()
        await store.recall("ann", question)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def measure(server: PostgresServer, size: int, questions: int) -> list[Figure]:
    database = Database(server.create_database())
    await database.open()
    try:
        postgres = postgres_memory(database, MemoryConfig, lambda: NOW)
        files = file_memory(Path(tempfile.mkdtemp()), MemoryConfig, lambda: NOW)
        made = items(size)
        for start in range(0, size, BATCH):
            await postgres.add("ann", made[start : start + BATCH])
            await files.add("ann", made[start : start + BATCH])
        chosen = random.Random(1)
        asked = [" ".join(chosen.choices(VOCABULARY, WEIGHTS, k=4)) for _ in range(questions)]
        await recall_times(files, asked[:5])  # loads the user's files
        await recall_times(postgres, asked[:5])
        from_files = await recall_times(files, asked)
        from_postgres = await recall_times(postgres, asked)
    finally:
        await database.close()
    label = f"{size:,} items"
    ratio = median(from_postgres) / median(from_files)
    return [
        Figure(NAME, f"{label}: files recall p50", median(from_files), "ms", ""),
        Figure(NAME, f"{label}: files recall p95", percentile(from_files, 95), "ms", ""),
        Figure(NAME, f"{label}: postgres recall p50", median(from_postgres), "ms", ""),
        Figure(NAME, f"{label}: postgres recall p95", percentile(from_postgres, 95), "ms", ""),
        Figure(NAME, f"{label}: postgres / files p50", ratio, "x", ""),
    ]


def run(sizes: tuple[int, ...] = (2_000, 20_000), questions: int = 100) -> list[Figure]:
    async def all_sizes() -> list[Figure]:
        server = PostgresServer().start()
        try:
            return [f for size in sizes for f in await measure(server, size, questions)]
        finally:
            server.stop()

    return asyncio.run(all_sizes())


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    print_table(run())
