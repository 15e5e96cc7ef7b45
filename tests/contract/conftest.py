"""Each port's stores, as fixtures parametrised over the file store and the PostgreSQL one:
a contract test runs once per store. The PostgreSQL runs are marked `postgres`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from bot.storage.postgres.database import Database
from bot.storage.postgres.sessions import PostgresSessionStore
from bot.storage.sessions import JsonSessionStore
from tests.fakes.postgres import PostgresServer

STORES = [pytest.param("files"), pytest.param("postgres", marks=pytest.mark.postgres)]

SessionStores = Callable[[], Awaitable[JsonSessionStore | PostgresSessionStore]]


@pytest.fixture(params=STORES)
async def new_session_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SessionStores]:
    """Makes a session store over the same place each call: a second one sees what the first
    stored, as a restarted bot (or another process) would."""
    databases: list[Database] = []
    urls: list[str] = []

    async def make() -> JsonSessionStore | PostgresSessionStore:
        if request.param == "files":
            return JsonSessionStore(tmp_path / "sessions")
        if not urls:
            server: PostgresServer = request.getfixturevalue("postgres_server")
            urls.append(server.create_database())
        database = Database(urls[0])
        await database.open()
        databases.append(database)
        return PostgresSessionStore(database)

    yield make
    for database in databases:
        await database.close()
