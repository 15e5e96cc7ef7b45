"""The PostgreSQL session store through an outage: what it could not write waits in memory,
and a chat it first saw while the database was away is added to the stored one, never
written over it."""

import asyncio

import pytest

from bot.adapters.postgres.database import Database, DatabaseDown
from bot.adapters.postgres.migrations import MIGRATIONS
from bot.adapters.postgres.sessions import PostgresSessionStore
from bot.conversation import ChatMessage

pytestmark = pytest.mark.postgres


async def opened(url: str) -> Database:
    database = Database(url)
    await database.open()
    return database


async def test_a_chat_begun_during_an_outage_is_appended_to_the_stored_one(own_postgres):
    url = own_postgres.create_database()
    earlier, restarted = await opened(url), await opened(url)
    try:
        before = PostgresSessionStore(earlier)  # the process that ran before a restart
        session = await before.load("telegram:7")
        session.messages += [ChatMessage.user("my locker is 12"), ChatMessage.assistant("ok")]
        await before.save(session)

        store = PostgresSessionStore(restarted)
        own_postgres.pause()
        during = await store.load("telegram:7")
        assert during.messages == [], "nothing to go on: a fresh session answers"
        during.messages += [ChatMessage.user("and my bike is blue"), ChatMessage.assistant("ok")]
        await store.save(during)
        assert store.unwritten() == 1
        with pytest.raises(DatabaseDown):
            await store.count_for("7")  # `/memory` says it failed rather than guess

        own_postgres.resume()
        await store.retry_unwritten()
        assert store.unwritten() == 0
        stored = await PostgresSessionStore(earlier).load("telegram:7")
        assert [m.content for m in stored.messages] == [
            "my locker is 12",
            "ok",
            "and my bike is blue",
            "ok",
        ]
        assert next(m.content for m in (await store.load("telegram:7")).messages) == (
            "my locker is 12"
        )
    finally:
        await earlier.close()
        await restarted.close()


async def test_a_damaged_row_is_set_aside_and_a_fresh_session_starts(database_url, caplog):
    database = await opened(database_url)
    try:
        async with database.connection("test") as connection:
            await connection.execute(
                'INSERT INTO sessions VALUES (\'c\', \'{"key": "c", "messages": [{\', '
                "ARRAY['c'], now())"
            )
        store = PostgresSessionStore(database)
        assert (await store.load("c")).messages == []
        assert any("damaged" in r.getMessage() for r in caplog.records)
        async with database.connection("test") as connection:
            cursor = await connection.execute("SELECT session FROM archived_sessions")
            assert [row[0] async for row in cursor] == ['{"key": "c", "messages": [{']
    finally:
        await database.close()


async def test_the_schema_is_created_once_however_often_the_bot_starts(database_url):
    first, second = Database(database_url), Database(database_url)
    await asyncio.gather(first.open(), second.open())  # two processes starting together
    try:
        async with first.connection("test") as connection:
            cursor = await connection.execute("SELECT version FROM schema_migrations")
            assert [row[0] async for row in cursor] == [step.version for step in MIGRATIONS]
    finally:
        await first.close()
        await second.close()


async def test_new_after_an_outage_archives_the_session_as_it_is_now(own_postgres):
    url = own_postgres.create_database()
    database = await opened(url)
    try:
        store = PostgresSessionStore(database)
        session = await store.load("t:1")
        session.messages += [ChatMessage.user("before"), ChatMessage.assistant("ok")]
        await store.save(session)
        own_postgres.pause()
        session.messages += [ChatMessage.user("during"), ChatMessage.assistant("ok")]
        await store.save(session)
        with pytest.raises(DatabaseDown):
            await store.archive("t:1")  # `/new` says it failed; nothing is lost
        assert store.unwritten() == 1
        own_postgres.resume()
        await store.archive("t:1")
        async with database.connection("test") as connection:
            cursor = await connection.execute("SELECT session FROM archived_sessions")
            archived = [row[0] async for row in cursor]
        assert len(archived) == 1 and '"during"' in archived[0]
        assert (await store.load("t:1")).messages == [] and store.unwritten() == 0
    finally:
        await database.close()
