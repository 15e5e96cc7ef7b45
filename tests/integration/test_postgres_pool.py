"""The pool lends a connection without a round trip only while there is no reason to doubt
it: one the server has ended since it was last used is replaced before a store sees it; one
it ends in the middle of a batch write costs one log line, the bot's."""

import asyncio
import logging

import pytest

from bot.adapters.postgres.database import Database, DatabaseDown

pytestmark = pytest.mark.postgres


async def backend_pid(database: Database) -> int:
    async with database.connection("test") as connection:
        cursor = await connection.execute("SELECT pg_backend_pid()")
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def end_backend(url: str, pid: int) -> None:
    """End the session `pid` from another connection, and wait until it is gone (so it has
    told its client, as a restart or `pg_terminate_backend` does)."""
    database = Database(url, max_connections=1)
    await database.open()
    try:
        async with database.connection("test") as connection:
            await connection.execute("SELECT pg_terminate_backend(%s)", (pid,))
            for _ in range(500):
                cursor = await connection.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)
                )
                row = await cursor.fetchone()
                if row is not None and row[0] == 0:
                    return
                await asyncio.sleep(0.01)
        raise AssertionError(f"session {pid} did not end")
    finally:
        await database.close()


async def test_a_connection_the_server_ended_just_after_use_is_replaced_unseen(database_url):
    database = Database(database_url, max_connections=1)
    await database.open()
    try:
        ended = await backend_pid(database)  # used just now: trusted, unless it hears news
        await end_backend(database_url, ended)
        assert await backend_pid(database) != ended
        assert not database.health.failing, "no store call failed for it"
    finally:
        await database.close()


async def test_a_connection_in_steady_use_keeps_its_session(database_url):
    database = Database(database_url, max_connections=1)
    await database.open()
    try:
        pids = {await backend_pid(database) for _ in range(20)}
        assert len(pids) == 1, "the one connection is lent again, not replaced"
    finally:
        await database.close()


async def test_a_session_ended_in_the_middle_of_a_batch_logs_the_outage_once(database_url, caplog):
    """As a server stopping while the usage writer sends its rows: the batch's pipeline fails,
    and so does its clean-up, which psycopg would log as a warning of its own."""
    caplog.set_level(logging.INFO)
    database = Database(database_url, max_connections=1)
    await database.open()
    try:
        with pytest.raises(DatabaseDown):
            async with database.connection("usage") as connection:
                async with connection.cursor() as cursor:
                    await cursor.executemany(  # the first row ends the session
                        "SELECT pg_terminate_backend(pg_backend_pid()) WHERE %s",
                        [(True,), (True,)],
                    )
    finally:
        await database.close()
    down = [r for r in caplog.records if "[Database] cannot reach" in r.getMessage()]
    assert len(down) == 1
    assert not [r for r in caplog.records if r.name.startswith("psycopg")], "one line"


async def test_a_task_cancelled_as_its_connection_arrives_stops_and_never_uses_it(database_url):
    """Python 3.11's `asyncio.wait_for`, which the pool waits with, returns the connection
    instead of raising when the cancellation comes with it: the task went on as if never
    asked to stop, and a loop stopped that way never stopped (`cancellation.py`)."""
    database = Database(database_url, max_connections=1)
    await database.open()
    try:
        holding = database.connection("test")
        await holding.__aenter__()
        used: list[bool] = []

        async def wait_for_the_connection() -> None:
            async with database.connection("test"):
                used.append(True)

        waiting = asyncio.create_task(wait_for_the_connection())
        for _ in range(1000):
            if database.pool_figures().get("requests_waiting"):
                break
            await asyncio.sleep(0.005)
        assert database.pool_figures().get("requests_waiting") == 1
        await holding.__aexit__(None, None, None)  # the connection goes to the waiting task,
        waiting.cancel()  # and the stop arrives with it
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert used == [], "the cancelled task went on with the connection"
        async with database.connection("test") as connection:  # it went back to the pool
            await connection.execute("SELECT 1")
    finally:
        await database.close()
