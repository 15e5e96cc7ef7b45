"""Each port's stores, as fixtures parametrised over the file store and the PostgreSQL one:
a contract test runs once per store. The PostgreSQL runs are marked `postgres`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.adapters.embeddings.embedded import EmbeddedEmbedder
from bot.adapters.postgres.choices import PostgresChoiceTables
from bot.adapters.postgres.database import Database
from bot.adapters.postgres.inbox import PostgresUpdateInbox
from bot.adapters.postgres.memory import postgres_memory
from bot.adapters.postgres.rag_queue import PostgresIndexLedger, PostgresIndexQueue
from bot.adapters.postgres.reminders import PostgresReminderBook
from bot.adapters.postgres.sessions import PostgresSessionStore
from bot.adapters.postgres.usage import PostgresUsageLedger
from bot.adapters.telegram.inbox import UpdateInbox, chat_of, sender_of
from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.service import MemoryService
from bot.rag.ledger import IndexLedger
from bot.rag.queue import IndexQueue
from bot.reminders import ReminderBook
from bot.storage.choices import ChoiceStore, KeyedChoices
from bot.storage.sessions import JsonSessionStore
from bot.usage.ledger import UsageLedger, utc_today
from tests.fakes.postgres import PostgresServer

STORES = [pytest.param("files"), pytest.param("postgres", marks=pytest.mark.postgres)]

SessionStores = Callable[[], Awaitable[JsonSessionStore | PostgresSessionStore]]


class Connections:
    """Connections to one test database, each as a new process would open it."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._url: str | None = None
        self.opened: list[Database] = []

    async def open(self) -> Database:
        if self._url is None:
            if self._request.node.get_closest_marker("postgres") is None:  # make test-fast
                raise RuntimeError(f"{self._request.node.nodeid} uses PostgreSQL: mark it postgres")
            server: PostgresServer = self._request.getfixturevalue("postgres_server")
            self._url = server.create_database()
        database = Database(self._url)
        await database.open()
        self.opened.append(database)
        return database

    async def close(self) -> None:
        for database in self.opened:
            await database.close()


@pytest.fixture(params=STORES)
async def new_session_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SessionStores]:
    """Makes a session store over the same place each call: a second one sees what the first
    stored, as a restarted bot (or another process) would."""
    connections = Connections(request)

    async def make() -> JsonSessionStore | PostgresSessionStore:
        if request.param == "files":
            return JsonSessionStore(tmp_path / "sessions")
        return PostgresSessionStore(await connections.open())

    yield make
    await connections.close()


Ledgers = Callable[..., Awaitable[UsageLedger | PostgresUsageLedger]]


@pytest.fixture(params=STORES)
async def new_usage_ledger(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Ledgers]:
    """Makes a usage ledger over the same place each call (`today` as given), after the
    ones made before have written what they hold, as a restart would."""
    connections = Connections(request)
    ledgers: list[PostgresUsageLedger] = []

    async def make(today: Callable[[], date] = utc_today) -> UsageLedger | PostgresUsageLedger:
        for earlier in ledgers:
            await earlier.drain()
        if request.param == "files":
            return UsageLedger(tmp_path / "usage", today=today)
        ledger = PostgresUsageLedger(await connections.open(), today=today)
        await ledger.load()
        ledgers.append(ledger)
        return ledger

    yield make
    for ledger in ledgers:
        await ledger.drain()
    await connections.close()


MemoryStores = Callable[..., Awaitable[MemoryService]]


@pytest.fixture(scope="session")
def e5() -> EmbeddedEmbedder:
    """The bundled embedding model, loaded once for the run."""
    embedder = EmbeddedEmbedder()
    embedder.load()
    yield embedder
    embedder.close()


class MemoryClock:
    """The memory stores' clock: UTC now, until a test moves it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def memory_clock() -> MemoryClock:
    return MemoryClock()


@pytest.fixture(params=STORES)
async def new_memory_store(
    request: pytest.FixtureRequest, tmp_path: Path, memory_clock: MemoryClock
) -> AsyncIterator[MemoryStores]:
    """Makes a memory store over the same place each call (`embedder`: none unless given),
    after the ones made before have finished writing, as a restart would."""
    connections = Connections(request)
    made: list[MemoryService] = []

    async def make(
        embedder: EmbeddedEmbedder | None = None, config: MemoryConfig | None = None
    ) -> MemoryService:
        for earlier in made:
            await earlier.drain()
        settings = config or MemoryConfig()
        store: MemoryService
        if request.param == "files":
            store = file_memory(
                tmp_path / "memory", lambda: settings, memory_clock, embedder=embedder
            )
        else:
            store = postgres_memory(
                await connections.open(), lambda: settings, memory_clock, embedder=embedder
            )
        made.append(store)
        return store

    yield make
    for store in made:
        await store.drain()
    await connections.close()


Inboxes = Callable[[], Awaitable[UpdateInbox | PostgresUpdateInbox]]


def allowed_sender(update: dict) -> bool:
    """Who the inboxes of these tests keep: users 1 to 9; anyone else is a stranger."""
    return (update.get("message") or {}).get("from", {}).get("id") in range(1, 10)


@pytest.fixture(params=STORES)
async def new_inbox(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Inboxes]:
    """Makes a Telegram inbox over the same place each call: the next start of the bot (the
    one before closed first), or, in PostgreSQL, another process beside it."""
    connections = Connections(request)
    made: list[UpdateInbox | PostgresUpdateInbox] = []

    async def make() -> UpdateInbox | PostgresUpdateInbox:
        inbox: UpdateInbox | PostgresUpdateInbox
        if request.param == "files":
            inbox = UpdateInbox(tmp_path / "telegram" / "inbox.jsonl", allowed_sender)
        else:
            database = await connections.open()
            inbox = PostgresUpdateInbox(
                database, allowed_sender, chat_of, sender_of, sweep_seconds=0.2
            )
        made.append(inbox)
        return inbox

    yield make
    for inbox in made:
        await inbox.close()
    await connections.close()


Queues = Callable[[], Awaitable[IndexQueue | PostgresIndexQueue]]


@pytest.fixture(params=STORES)
async def new_index_queue(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Queues]:
    """Makes an index queue over the same place each call, as a restart would."""
    connections = Connections(request)

    async def make() -> IndexQueue | PostgresIndexQueue:
        if request.param == "files":
            return IndexQueue(tmp_path / "rag" / "queue")
        queue = PostgresIndexQueue(await connections.open())
        await queue.load()
        return queue

    yield make
    await connections.close()


Ledgers_ = Callable[[], Awaitable[IndexLedger | PostgresIndexLedger]]


@pytest.fixture(params=STORES)
async def new_index_ledger(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Ledgers_]:
    """Makes an index ledger over the same place each call, as a restart would."""
    connections = Connections(request)

    async def make() -> IndexLedger | PostgresIndexLedger:
        if request.param == "files":
            return IndexLedger(tmp_path / "rag" / "ledger")
        ledger = PostgresIndexLedger(await connections.open())
        await ledger.load()
        return ledger

    yield make
    await connections.close()


ReminderBooks = Callable[[], Awaitable[ReminderBook | PostgresReminderBook]]


@pytest.fixture(params=STORES)
async def new_reminder_book(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ReminderBooks]:
    """Makes a reminder book over the same place each call, as a restart (or, with
    PostgreSQL, another process) would see it."""
    connections = Connections(request)

    async def make() -> ReminderBook | PostgresReminderBook:
        if request.param == "files":
            return ReminderBook(tmp_path / "reminders" / "reminders.json")
        return PostgresReminderBook(await connections.open())

    yield make
    await connections.close()


Choices = Callable[[str, type], Awaitable[ChoiceStore]]


@pytest.fixture(params=STORES)
async def new_choices(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Choices]:
    """Makes the choices of one kind (`/model`'s, `/language`'s...) over the same place each
    call, read as a restart reads them."""
    connections = Connections(request)
    tables: list[PostgresChoiceTables] = []

    async def make(kind: str, value_type: type) -> ChoiceStore:
        if request.param == "files":
            return KeyedChoices(tmp_path / f"{kind}.json", kind, value_type, f"[{kind}]")
        table = PostgresChoiceTables(await connections.open())
        tables.append(table)
        choices = table.kind(kind, value_type, f"[{kind}]")
        await table.load()
        return choices

    yield make
    for table in tables:
        await table.aclose()
    await connections.close()
