"""The RAG index queue in PostgreSQL with several processes: each document handed to one
worker only, a killed worker's document taken over once its claim lapses, and documents
queued while the database is away written once it is back."""

import asyncio
from datetime import UTC, datetime

import pytest

from bot.adapters.postgres.database import Database
from bot.adapters.postgres.rag_queue import PostgresIndexQueue
from bot.rag.model import RagDocument

pytestmark = pytest.mark.postgres


def document(text: str) -> RagDocument:
    return RagDocument(
        owner="ann",
        chat_key="telegram:ann",
        file_source=f"ann-{text}",
        text=text,
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )


async def opened(url: str) -> Database:
    database = Database(url)
    await database.open()
    return database


async def test_two_processes_never_send_the_same_document(database_url):
    databases = [await opened(database_url) for _ in range(2)]
    try:
        queues = [PostgresIndexQueue(database) for database in databases]
        for at in range(40):
            await queues[0].put(document(f"doc {at}"))
        sent: list[str] = []

        async def worker(queue: PostgresIndexQueue) -> None:
            while (item := await queue.claim()) is not None:
                sent.append(item.document.text)
                await asyncio.sleep(0)  # the other worker claims meanwhile
                await queue.done(item)

        await asyncio.gather(*(worker(queue) for queue in queues * 2))
        assert sorted(sent) == sorted(f"doc {at}" for at in range(40))
    finally:
        for database in databases:
            await database.close()


async def test_a_killed_workers_document_is_taken_over_once_its_claim_lapses(database_url):
    killed, other = await opened(database_url), await opened(database_url)
    try:
        await PostgresIndexQueue(killed).put(document("held"))
        await PostgresIndexQueue(killed).put(document("next"))
        held = await PostgresIndexQueue(killed).claim()  # and never finished: killed
        survivor = PostgresIndexQueue(other)
        following = await survivor.claim()
        assert following.document.text == "next", "a held document is not sent twice"
        await survivor.done(following)
        assert await survivor.claim() is None
        async with other.connection("test") as connection:  # the lease runs out
            await connection.execute("UPDATE rag_queue SET claimed_until = now() - interval '1s'")
        taken = await survivor.claim()
        assert taken.key == held.key and taken.document.text == "held"
    finally:
        await killed.close()
        await other.close()


async def test_documents_queued_while_the_database_is_away_are_written_when_it_is_back(
    own_postgres,
):
    database = await opened(own_postgres.create_database())
    try:
        queue = PostgresIndexQueue(database)
        woken = asyncio.Event()
        queue.on_written = woken.set
        own_postgres.pause()
        await queue.put(document("during the outage"))
        assert queue.unwritten() == 1 and queue.depth == 1
        own_postgres.resume()
        await queue.retry_unwritten()
        assert woken.is_set() and queue.unwritten() == 0
        item = await PostgresIndexQueue(database).claim()
        assert item.document.text == "during the outage"
    finally:
        await database.close()
