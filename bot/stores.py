"""Where the bot keeps what it keeps: files in the data dir, or PostgreSQL (`DATABASE_URL`).

`stores_for` picks one; `file_stores` and `postgres_stores` are the only code that knows
which backend the bot runs on. Each hands `BotApp.build` the same `Stores`, so the rest of the
composition never asks. Tests and benchmarks build their own and pass `stores=`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.config.model import MemoryConfig
from bot.i18n import Language
from bot.memory.file_repository import file_memory
from bot.memory.remember_switch import RememberSwitch
from bot.memory.service import MemoryService
from bot.ops.checks import DatabaseReadiness
from bot.ports.embeddings import EmbeddingPort
from bot.ports.health import HealthCheck
from bot.ports.inbox import TelegramInbox
from bot.ports.memory import UserMemoryStore
from bot.ports.rag import IndexLedgerStore, IndexQueueStore
from bot.ports.sessions import SessionStore
from bot.ports.status import StatusProvider
from bot.rag.ledger import IndexLedger
from bot.rag.queue import IndexQueue
from bot.reminders import ReminderBook
from bot.reminders.book import ReminderStore
from bot.reminders.scheduler import DeliveryLease
from bot.settings import Settings
from bot.storage.chat_models import ChatModels
from bot.storage.choices import ChoiceStore, KeyedChoices
from bot.storage.disk import DiskHealth
from bot.storage.languages import LanguageChoices
from bot.storage.sessions import JsonSessionStore
from bot.usage.ledger import UsageLedger, UsageRecords

if TYPE_CHECKING:
    from bot.adapters.postgres.database import Database

Hook = Callable[[], Awaitable[None]]
Memory = MemoryService
"""Short-term memory on either backend: every memory port but the extractor's queue."""
Clock = Callable[[], datetime]
"""UTC now: what memory dates its items and weighs their recency by."""
MemoryFactory = Callable[[Callable[[], MemoryConfig], EmbeddingPort, Clock], Memory]
KeepUpdate = Callable[[dict[str, Any]], bool]
InboxFactory = Callable[[Path, KeepUpdate], TelegramInbox]


class ChatSessions(SessionStore, UserMemoryStore, Protocol):
    """The sessions, as the app hands them to turns and `/new` and to `/memory` and `/forget`."""


async def _nothing() -> None:
    """Files need no opening or closing."""


@dataclass(frozen=True)
class Stores:
    """Everything the bot keeps, on one backend, made once."""

    sessions: ChatSessions
    usage: UsageRecords
    """Every LLM call, per user and day."""
    index_queue: IndexQueueStore
    index_ledger: IndexLedgerStore
    reminders: ReminderStore
    lease: DeliveryLease | None
    """Who delivers reminders; None: this process, the data dir's only one."""
    languages: LanguageChoices
    """`/language`, per user."""
    remember: RememberSwitch
    """`/remember off|on`, per user."""
    chat_models: ChatModels
    """`/model`, per chat."""
    voice: ChoiceStore[bool]
    """`/voice`, per chat (Telegram)."""
    memory: MemoryFactory
    """Makes short-term memory, once the config, the embedder and the clock it reads are
    known."""
    inbox: InboxFactory
    """Makes the Telegram inbox, for a bot built for Telegram."""
    status: list[StatusProvider]
    """What `/status` says of the backend itself."""
    readiness: dict[str, HealthCheck]
    """What `/readyz` checks of the backend itself."""
    open: Hook = _nothing
    """Opened first by `BotApp.start`: reads what the stores keep in memory."""
    close: Hook = _nothing
    """Closed last by `BotApp.aclose`, after every write has been handed over."""


def stores_for(settings: Settings, disk: DiskHealth) -> Stores:
    """PostgreSQL when `DATABASE_URL` names it (not connected until `open`), else files."""
    if settings.database_url is None:
        return file_stores(settings.data_dir, disk)
    return postgres_stores(settings.database_url.get_secret_value(), settings.data_dir, disk)


def file_stores(data: Path, disk: DiskHealth) -> Stores:
    """Files under the data dir, for one process; what the disk refuses is told to `disk`."""

    def memory(config: Callable[[], MemoryConfig], embedder: EmbeddingPort, clock: Clock) -> Memory:
        return file_memory(data / "memory", config, clock, embedder=embedder)

    def inbox(path: Path, keep: KeepUpdate) -> TelegramInbox:
        from bot.adapters.telegram import UpdateInbox  # PTB only for Telegram

        return UpdateInbox(path, keep=keep)

    return Stores(
        sessions=JsonSessionStore(data / "sessions", disk=disk),
        usage=UsageLedger(data / "usage"),
        index_queue=IndexQueue(data / "rag" / "queue", disk),
        index_ledger=IndexLedger(data / "rag" / "ledger", disk),
        reminders=ReminderBook(data / "reminders" / "reminders.json"),
        lease=None,
        languages=LanguageChoices(data / "languages.json"),
        remember=RememberSwitch(data / "memory" / "remember-off.json"),
        chat_models=ChatModels(data / "chat-models.json"),
        voice=KeyedChoices(
            data / "telegram" / "voice-replies.json", "chats", bool, "[Telegram] /voice"
        ),
        memory=memory,
        inbox=inbox,
        status=[],
        readiness={},
    )


def postgres_stores(url: str, data: Path, disk: DiskHealth) -> Stores:
    """PostgreSQL at `url`, shared by every process on it; what the database refuses is
    retried with the disk's backlog. Of the processes, the one holding the reminders'
    advisory lock delivers them; each chat's updates are handled by one at a time.

    The PostgreSQL stores (and psycopg) are imported here: a bot on files never loads them."""
    from bot.adapters.postgres.choices import PostgresChoiceTables
    from bot.adapters.postgres.database import Database
    from bot.adapters.postgres.memory import postgres_memory
    from bot.adapters.postgres.rag_queue import PostgresIndexLedger, PostgresIndexQueue
    from bot.adapters.postgres.reminders import PostgresReminderBook, ReminderLease
    from bot.adapters.postgres.sessions import PostgresSessionStore
    from bot.adapters.postgres.usage import PostgresUsageLedger

    database = Database(url)
    usage = PostgresUsageLedger(database)
    queue = PostgresIndexQueue(database)
    ledger = PostgresIndexLedger(database)
    sessions = PostgresSessionStore(database)
    choices = PostgresChoiceTables(database)
    for backlog in (usage, queue, sessions):
        disk.add_backlog(backlog)

    def memory(config: Callable[[], MemoryConfig], embedder: EmbeddingPort, clock: Clock) -> Memory:
        items = postgres_memory(database, config, clock, embedder=embedder)
        disk.add_backlog(items)
        return items

    async def open() -> None:
        await database.open()  # `DatabaseUnavailable` here stops the start before anything
        for store in (usage, ledger, queue, choices):
            await store.load()

    async def close() -> None:
        await choices.aclose()
        await usage.drain()
        await database.close()

    return Stores(
        sessions=sessions,
        usage=usage,
        index_queue=queue,
        index_ledger=ledger,
        reminders=PostgresReminderBook(database),
        lease=ReminderLease(url),
        languages=LanguageChoices(None, choices.kind("language", Language, "[Language]")),
        remember=RememberSwitch(
            data / "memory" / "remember-off.json",
            choices.kind("remember-off", bool, "[Memory] /remember"),
        ),
        chat_models=ChatModels(None, choices.kind("model", str, "[Models] /model")),
        voice=choices.kind("voice", bool, "[Telegram] /voice"),
        memory=memory,
        inbox=_postgres_inbox(database),
        status=[database.health],
        readiness={"database": DatabaseReadiness(database)},
        open=open,
        close=close,
    )


def _postgres_inbox(database: Database) -> Callable[[Path, KeepUpdate], TelegramInbox]:
    """The Telegram inbox in `database`, made (and PTB imported) only for Telegram."""

    def inbox(path: Path, keep: KeepUpdate) -> TelegramInbox:
        from bot.adapters.postgres.inbox import PostgresUpdateInbox
        from bot.adapters.telegram.inbox import chat_of, sender_of

        return PostgresUpdateInbox(database, keep, chat_of, sender_of)

    return inbox
