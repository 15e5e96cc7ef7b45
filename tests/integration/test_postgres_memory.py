"""PostgreSQL memory against the file store, and through an outage.

The two stores share `rank_candidates`, so the same conversation recalls the same lines in
the same order from either, by words and by meaning (the bundled e5 model). While the
database is away a recall is empty rather than an error, and what was said waits in memory
until it is back."""

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest

from bench.memory_eval_data import load_eval_set
from bot.adapters.embeddings.embedded import EmbeddedEmbedder
from bot.adapters.postgres.database import REST_SECONDS, Database, DatabaseDown, DatabaseHealth
from bot.adapters.postgres.memory import postgres_memory
from bot.config.model import MemoryConfig
from bot.memory.documents import document_parts
from bot.memory.file_repository import file_memory
from bot.memory.model import ItemType, new_item
from bot.memory.service import MemoryService

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ITEM_ID = re.compile(r"#[0-9a-f]+\b")


@pytest.fixture(scope="module")
def e5():
    embedder = EmbeddedEmbedder()
    embedder.load()
    yield embedder
    embedder.close()


async def opened(url: str) -> Database:
    database = Database(url)
    await database.open()
    return database


class RestClock:
    """The database health's clock: `rest_over` lets turns' calls try the database again."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def rest_over(self) -> None:
        self.seconds += REST_SECONDS


@asynccontextmanager
async def store_with_clock(own_postgres) -> AsyncIterator[tuple[MemoryService, RestClock]]:
    """A memory store on a database of its own, whose outage rest the test ends at will."""
    clock = RestClock()
    database = Database(own_postgres.create_database(), DatabaseHealth(timer=lambda: clock.seconds))
    await database.open()
    try:
        yield postgres_memory(database, MemoryConfig, lambda: NOW), clock
    finally:
        await database.close()


async def tell_everything(store, statements: list[str], reply: str) -> None:
    for at, statement in enumerate(statements):
        await store.remember_exchange("ann", statement, reply, f"turn:ann:{at}")
    await store.recall("ann", "warm up")  # the file store opens its vectors on a first recall
    await store.drain()


async def test_both_stores_recall_the_same_lines_in_the_same_order(tmp_path, database_url, e5):
    evaluation = load_eval_set()
    facts = evaluation.split("dev")
    statements = [fact.statement for fact in facts] + list(evaluation.small_talk)
    database = await opened(database_url)
    try:
        files = file_memory(tmp_path / "memory", MemoryConfig, lambda: NOW, embedder=e5)
        postgres = postgres_memory(database, MemoryConfig, lambda: NOW, embedder=e5)
        for store in (files, postgres):
            await tell_everything(store, statements, evaluation.reply)
        assert await files.count_for("ann") == await postgres.count_for("ann") > len(facts)
        compared = 0
        for fact in facts:
            for question in (fact.natural, fact.paraphrase):
                from_files = ITEM_ID.sub("#id", await files.recall("ann", question))
                from_postgres = ITEM_ID.sub("#id", await postgres.recall("ann", question))
                assert from_postgres == from_files, question
                compared += bool(from_files)
        assert compared > len(facts), "most questions recall something"
    finally:
        await database.close()


async def test_through_an_outage_recall_is_empty_and_what_was_said_waits(own_postgres):
    url = own_postgres.create_database()
    database = await opened(url)
    try:
        store = postgres_memory(database, MemoryConfig, lambda: NOW)
        await store.remember_exchange("ann", "My name is Ann.", "Nice to meet you, Ann!", "t:0")
        own_postgres.pause()
        assert await store.recall("ann", "what is my name?") == ""
        said = await store.remember_exchange(
            "ann", "Remember that my staging server is at 10.0.0.5.", "Noted.", "t:1"
        )
        assert said[0].content == "The user's staging server is at 10.0.0.5."
        assert store.unwritten() == len(said)
        with pytest.raises(DatabaseDown):
            await store.overview("ann")  # `/memory` says it failed rather than show nothing

        own_postgres.resume()
        await store.retry_unwritten()
        assert store.unwritten() == 0
        pack = await store.recall("ann", "what is the IP of my staging server?")
        assert "The user's staging server is at 10.0.0.5." in pack.splitlines()[1], "under its day"
        assert "Ann" in pack
    finally:
        await database.close()


async def test_an_item_waiting_for_the_database_is_forgotten_with_the_user(own_postgres):
    async with store_with_clock(own_postgres) as (store, clock):
        own_postgres.pause()
        await store.remember_exchange("ann", "My name is Ann.", "Nice to meet you!", "t:0")
        assert store.unwritten() == 1
        own_postgres.resume()
        clock.rest_over()  # turns' calls try the database again
        assert await store.forget_user("ann") == 1
        await store.retry_unwritten()
        assert await store.count_for("ann") == 0, "nothing comes back after /forget all"


async def test_two_processes_storing_one_fact_at_once_make_one_item(database_url):
    first, second = await opened(database_url), await opened(database_url)
    try:
        stores = [postgres_memory(db, MemoryConfig, lambda: NOW) for db in (first, second)]
        said = "Remember that my staging server is at 10.0.0.5."
        await asyncio.gather(
            *(
                store.remember_exchange("ann", said, "Noted.", f"t:{at}")
                for at, store in enumerate(stores * 3)
            )
        )
        items = await stores[1].live_items("ann")
        assert len(items) == 2, "the fact and the exchange, each once (repeated: promoted)"
        fact = next(item for item in items if item.content.startswith("The user's staging"))
        assert fact.confidence > 0.95, "six repeats, each merged into the one item"
    finally:
        await first.close()
        await second.close()


async def test_two_processes_writing_one_users_documents_and_talk_lose_nothing(database_url):
    """Two bot processes on one database, each storing a document of the same user while
    the other stores what the user says: every part and every exchange is there after."""
    first, second = await opened(database_url), await opened(database_url)
    try:
        stores = [postgres_memory(db, MemoryConfig, lambda: NOW) for db in (first, second)]
        documents = [
            document_parts(
                document_id,
                [f"Page {n} of report {document_id}: figure {n}." for n in range(90)],
                NOW,
                0.6,
            )
            for document_id in ("aaaaaaaaaa", "bbbbbbbbbb")
        ]
        said = [f"Our quarterly review number {n} moved to room {n}00." for n in range(6)]
        kept = await asyncio.gather(
            *(
                store.keep_parts("ann", parts)
                for store, parts in zip(stores, documents, strict=True)
            ),
            *(
                store.remember_exchange("ann", words, "Noted.", f"t:{at}")
                for at, (store, words) in enumerate(zip(stores * 3, said, strict=True))
            ),
        )
        assert kept[:2] == [90, 90]
        overview = await stores[0].overview("ann")
        assert (overview.document_parts, overview.episodes) == (180, 6)
        assert len(await stores[1].parts_of("ann", "bbbbbbbbbb")) == 90
    finally:
        await first.close()
        await second.close()


async def test_an_item_forgotten_while_it_waits_for_the_database_never_comes_back(own_postgres):
    async with store_with_clock(own_postgres) as (store, clock):
        own_postgres.pause()
        (fact,) = await store.add(
            "ann", [new_item(ItemType.FACT, "The user's PIN is 4512", source="t", confidence=1)]
        )
        own_postgres.resume()
        clock.rest_over()
        await store.forget("ann", fact.id)
        await store.retry_unwritten()
        assert await store.count_for("ann") == 0


async def test_past_the_cap_the_oldest_episodes_go_from_the_database(database_url):
    database = await opened(database_url)
    clock = {"now": NOW}
    try:
        store = postgres_memory(
            database, lambda: MemoryConfig(maxEpisodes=100), lambda: clock["now"]
        )
        for day in range(102):
            said = f"Planted {day} tulip bulbs along the garden fence today, number {day}."
            await store.remember_exchange("cap", said, "Nice.", f"t{day}")
            clock["now"] = NOW + timedelta(days=day + 1)
        kept = await store.live_items("cap")
        numbers = sorted(int(item.content.split("number ")[1].split(".")[0]) for item in kept)
        assert numbers == list(range(2, 102)), "the two oldest went"
    finally:
        await database.close()
