"""The composition root: the one place that knows every concrete class and wires them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from bot.adapters.embeddings.configured import ConfiguredEmbedder
from bot.adapters.lightrag import LightRagAdapter
from bot.adapters.openai_llm import OpenAiLlm
from bot.adapters.openai_speech import OpenAiSpeech
from bot.adapters.postgres.choices import PostgresChoiceTables
from bot.adapters.postgres.database import Database
from bot.adapters.postgres.memory import PostgresMemory
from bot.adapters.postgres.rag_queue import PostgresIndexLedger, PostgresIndexQueue
from bot.adapters.postgres.reminders import PostgresReminderBook, ReminderLease
from bot.adapters.postgres.sessions import PostgresSessionStore
from bot.adapters.postgres.usage import PostgresUsageLedger
from bot.chat_locks import ChatLanes
from bot.commands import CommandRegistry, CoreCommands
from bot.commands.language import LanguageCommands
from bot.commands.memory import MemoryCommands
from bot.commands.model import ModelCommands
from bot.commands.reminders import ReminderCommands
from bot.commands.skills import SkillCommands
from bot.commands.usage import UsageCommands
from bot.compaction import SessionCompactor
from bot.config import RuntimeConfigStore
from bot.conversation import IncomingMessage
from bot.conversation.messages import utc_now
from bot.i18n import Language
from bot.mcp.servers import McpServers
from bot.media.library import DocumentLibrary
from bot.media.reader import MediaReader
from bot.memory.llm_extraction import LlmFactExtractor
from bot.memory.remember_switch import RememberSwitch
from bot.memory.service import ShortTermMemory
from bot.ops.checks import DatabaseReadiness, RagReadiness, StoreReadiness
from bot.ops.metrics import PrometheusMetrics
from bot.ops.readiness import Readiness
from bot.ops.server import OpsServer
from bot.pipeline import Pipeline
from bot.pipeline.attachments import AttachmentSystem
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.channel import ChannelPort
from bot.ports.embeddings import EmbeddingPort
from bot.ports.health import HealthCheck
from bot.ports.llm import LlmPort
from bot.ports.memory import UserMemoryStore
from bot.ports.metrics import NO_METRICS, MetricsObserver
from bot.ports.rag import (
    IndexLedgerStore,
    IndexQueueStore,
    RagDocumentStore,
    RagHealthCheck,
    RagRecall,
    RagUploads,
)
from bot.ports.sessions import SessionStore
from bot.ports.speech import SpeechPort
from bot.prompts import PromptFiles
from bot.rag.circuit import CircuitState
from bot.rag.indexer import RagIndexer
from bot.rag.ledger import IndexLedger
from bot.rag.long_term import LongTermDocuments
from bot.rag.queue import IndexQueue
from bot.rag.status import RagStatus
from bot.reminders import ReminderBook, ReminderDesk
from bot.reminders.book import ReminderStore
from bot.reminders.scheduler import DeliveryLease, ReminderScheduler
from bot.running_turns import RunningTurns
from bot.settings import Settings
from bot.skills import SkillLibrary
from bot.storage.chat_models import ChatModels
from bot.storage.disk import DiskHealth
from bot.storage.languages import LanguageChoices
from bot.storage.sessions import JsonSessionStore
from bot.tools import ToolRegistry, builtin_tools
from bot.tools.memory import MemoryTool
from bot.tools.reminders import RemindersTool
from bot.tools.skill import SkillTool
from bot.turns import TurnRunner
from bot.usage.ledger import UsageLedger, UsageRecords
from bot.usage.meter import UsageMeter
from bot.usage.metered import MeteredLlm

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions
    from bot.ports.inbox import TelegramInbox

log = logging.getLogger(__name__)


Hook = Callable[[], Awaitable[None]]


class RagServer(RagRecall, RagUploads, RagDocumentStore, RagHealthCheck, Protocol):
    """The one long-term memory server, as the app hands it to recall, the index worker,
    `/forget` and `/status` (each of which sees only its own port)."""


class ChatSessions(SessionStore, UserMemoryStore, Protocol):
    """The sessions, as the app hands them to turns and `/new` and to `/memory` and `/forget`:
    JSON files, or PostgreSQL when `DATABASE_URL` is set."""


@dataclass
class BotApp:
    """A built bot: `start` it, hand it messages from any channel with `handle`, `aclose` it."""

    settings: Settings
    config: RuntimeConfigStore
    commands: CommandRegistry
    tools: ToolRegistry
    sessions: ChatSessions
    pipeline: Pipeline
    runner: TurnRunner
    llm: LlmPort
    memory: ShortTermMemory | PostgresMemory
    rag: RagServer
    indexer: RagIndexer
    embedder: EmbeddingPort
    extractor: LlmFactExtractor
    memory_stores: list[UserMemoryStore]
    """What `/memory` counts and `/forget all` empties; a channel may add its own."""
    disk: DiskHealth
    speech: SpeechPort
    """Voice notes to text and answers to speech, for channels that carry audio."""
    reminders: ReminderScheduler
    """Delivers due reminders through the channels handed to `reminders.deliver_through`."""
    languages: LanguageChoices
    """Each user's `/language`; the Telegram channel reads it for what it says itself."""
    mcp: McpServers
    """The MCP servers of the runtime config (`mcp.servers`), whose tools join the registry."""
    telegram: TelegramBot | None = None
    """The Telegram channel driving the app, when it was built for Telegram."""
    ops: OpsServer | None = None
    """`/healthz`, `/readyz` and `/metrics`, when `HTTP_PORT` is set (started by `start`)."""
    database: Database | None = None
    """PostgreSQL, when `DATABASE_URL` is set: opened first by `start`, closed last."""
    meter: UsageMeter | None = None
    """Counts transcriptions and filed documents against each user's daily budget."""
    _starting: list[Hook] = field(default_factory=list, repr=False)
    _closing: list[Hook] = field(default_factory=list, repr=False)
    _disk_retries: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        llm: LlmPort | None = None,
        embedder: EmbeddingPort | None = None,
        rag: RagServer | None = None,
        disk: DiskHealth | None = None,
        speech: SpeechPort | None = None,
        telegram: TelegramOptions | None = None,
        clock: Callable[[], datetime] = utc_now,
        environ: Mapping[str, str] | None = None,
    ) -> BotApp:
        """Wire the bot from settings, with the adapters given in place of the real ones.

        Each adapter left out is made from `settings` (the OpenAI-compatible LLM, the embedder
        `memory.embeddings` names, the LightRAG client, speech) and started and closed by the
        app; one handed in (a fake in tests, a scripted LLM in benchmarks) is the caller's to
        close.
        `disk` is told what the disk refused, from the start (the lock file) on. `telegram`:
        the bot runs in Telegram (`app.telegram`), with `/start`, `/voice` and the inbox wired in.
        `clock` (UTC now) is what reminders are set and fired by and what memory dates its
        items and weighs their recency by; tests and benchmarks move a fake one.
        `environ`: what `${NAME}` in an MCP server's config reads (default: the process's).
        """
        data = settings.data_dir
        disk = disk or DiskHealth()
        config = RuntimeConfigStore(settings.runtime_config_path)
        starting: list[Hook] = []
        closing: list[Hook] = []
        # Operators' metrics only when the HTTP listener serves them; else nothing is recorded.
        metrics = PrometheusMetrics() if settings.http_port is not None else None
        observer: MetricsObserver = metrics or NO_METRICS
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        readiness: dict[str, HealthCheck] = {}
        if llm is None:
            openai_llm = OpenAiLlm.connect(key, settings.openai_base_url)
            closing.append(openai_llm.close)
            readiness["llm"] = openai_llm.health
            llm = openai_llm
        # Sessions and usage in PostgreSQL when `DATABASE_URL` is set (`start` opens it).
        database = _database(settings)
        # Every LLM call is counted per user and day, and refused at a user's daily budget.
        usage: UsageRecords
        if database is not None:
            postgres_usage = PostgresUsageLedger(database)
            starting.append(postgres_usage.load)
            closing.append(postgres_usage.drain)
            disk.add_backlog(postgres_usage)  # what the database refused: retried with the disk's
            usage = postgres_usage
        else:
            usage = UsageLedger(data / "usage")
        metered = MeteredLlm(llm, usage, lambda: config.current().usage, observer)
        meter = UsageMeter(usage, lambda: config.current().usage)  # speech, documents filed

        # Short-term memory (`# Memory`, order 50) and the per-user "remember off" switch;
        # `memory.embeddings` picks the model that gives recall its sense of meaning.
        if embedder is None:
            embeddings_key = settings.embeddings_api_key
            configured = ConfiguredEmbedder(
                lambda: config.current().memory.embeddings,
                embeddings_key.get_secret_value() if embeddings_key else key,
                settings.openai_base_url,
            )
            starting.append(configured.warm_up)
            closing.append(configured.close)
            embedder = configured
        memory: ShortTermMemory | PostgresMemory
        if database is not None:  # memory items in PostgreSQL; retried with the disk's backlog
            memory = PostgresMemory(
                database, lambda: config.current().memory, clock, embedder=embedder
            )
            disk.add_backlog(memory)
        else:
            memory = ShortTermMemory(
                data / "memory", lambda: config.current().memory, clock, embedder=embedder
            )
        # Facts in any words: one structured LLM call after quick turns (`memory.extraction`).
        extractor = LlmFactExtractor(metered, config.current, memory)
        remember = RememberSwitch(data / "memory" / "remember-off.json")

        # Long-term memory through LightRAG (`# Relevant Memory`, order 55).
        ledger: IndexLedgerStore
        queue: IndexQueueStore
        if database is not None:  # the index queue and ledger in PostgreSQL
            postgres_ledger = PostgresIndexLedger(database)
            postgres_queue = PostgresIndexQueue(database)
            starting += [postgres_ledger.load, postgres_queue.load]
            disk.add_backlog(postgres_queue)  # what the database refused: retried with the disk's
            ledger, queue = postgres_ledger, postgres_queue
        else:
            ledger = IndexLedger(data / "rag" / "ledger", disk)
            queue = IndexQueue(data / "rag" / "queue", disk)
        if rag is None:
            lightrag = LightRagAdapter(config, settings.rag_api_key, owners=ledger.owner_count)
            starting.append(lambda: _log_refused_retrieval_style(lightrag, config))
            closing.append(lightrag.aclose)
            rag = lightrag
        indexer = RagIndexer(queue, rag, ledger, config)
        if isinstance(rag, LightRagAdapter):  # queued documents go once the server is back
            rag.breaker.on_recovery = indexer.server_is_back
        long_term = LongTermDocuments(queue, ledger, rag)
        sessions: ChatSessions
        if database is not None:
            sessions = PostgresSessionStore(database)
            disk.add_backlog(sessions)  # what the database refused is retried with the disk's
        else:
            sessions = JsonSessionStore(data / "sessions", disk=disk)
        # What `/memory` counts and `/forget all` empties, per user.
        memory_stores: list[UserMemoryStore] = [memory, long_term, sessions]

        # Voice notes in, spoken answers out (`speech`); its own key, else the LLM's.
        if speech is None:
            speech_key = settings.speech_api_key
            openai_speech = OpenAiSpeech(
                speech_key.get_secret_value() if speech_key else key, settings.openai_base_url
            )
            closing.append(openai_speech.close)
            speech = openai_speech

        # Skills (`preferences/skills/`): the chat's active one goes into `# Active Skill`.
        skills = SkillLibrary(settings.skills_dir)
        # Reminders: set by the model or `/reminders`, delivered without an LLM call through
        # the chat's turn lane (shared with the runner), so a turn and a reminder never both
        # write the session; kept in the data dir, and emptied by `/forget all`.
        lanes = ChatLanes()
        book: ReminderStore = ReminderBook(data / "reminders" / "reminders.json")
        lease: DeliveryLease | None = None  # with files: this process, the data dir's only one
        languages = LanguageChoices(data / "languages.json")  # `/language`
        chat_models = ChatModels(data / "chat-models.json")  # `/model`
        # With `DATABASE_URL`: reminders and the choices in PostgreSQL; of the processes on
        # it, the one holding the reminders' advisory lock delivers them.
        choices = PostgresChoiceTables(database) if database is not None else None
        if database is not None and choices is not None and settings.database_url is not None:
            book = PostgresReminderBook(database)
            lease = ReminderLease(settings.database_url.get_secret_value())
            languages = LanguageChoices(None, choices.kind("language", Language, "[Language]"))
            remember = RememberSwitch(
                remember.path, choices.kind("remember-off", bool, "[Memory] /remember")
            )
            chat_models = ChatModels(None, choices.kind("model", str, "[Models] /model"))
            starting.append(choices.load)
            closing.append(choices.aclose)
        memory_stores.append(book)
        reminders = ReminderScheduler(book, sessions, lanes, clock, languages, lease)
        desk = ReminderDesk(
            book, lambda: config.current().reminders, clock, on_change=reminders.wake
        )
        tools = ToolRegistry(
            [*builtin_tools(), MemoryTool(memory, remember), SkillTool(skills), RemindersTool(desk)]
        )
        # Tools from MCP servers (`mcp.servers`), started and stopped with the app; a server
        # that fails never holds up an answer. `${NAME}` in their config reads the environment.
        mcp = McpServers(lambda: config.current().mcp, os.environ if environ is None else environ)
        starting.append(mcp.start)
        closing.append(mcp.aclose)
        tools.add_source(mcp)
        prompts = PromptFiles(settings.prompts_dir)
        context = ContextBuildingSystem(prompts, tools, memory, rag, skills)
        compactor = SessionCompactor(metered)  # older turns become a summary (`/compact`)
        pipeline = Pipeline(
            [
                AttachmentSystem(MediaReader(), DocumentLibrary(indexer, memory), meter),
                context,
                ToolLoopSystem(metered, tools, chat_models, prompt=context, compactor=compactor),
                MemoryPersistSystem(memory, extractor),
                RagIndexingSystem(indexer),
                ResponseRoutingSystem(),
            ],
            observer,
        )
        rag_status = RagStatus(config, rag, queue, long_term, ledger.owner_count)
        commands = CommandRegistry()
        running = RunningTurns()  # what `/stop`, `/new` and `/forget all` stop
        CoreCommands(
            registry=commands,
            sessions=sessions,
            config=config,
            tools=tools,
            llm_endpoint=describe_endpoint(settings.openai_base_url),
            status_providers=[
                disk,
                *([database.health] if database is not None else []),
                remember,
                rag_status,
                skills,
                mcp,
            ],
            turns=running,
            compactor=compactor,
            models=chat_models,
        ).register()
        ModelCommands(commands, chat_models, config).register()
        SkillCommands(commands, skills, sessions).register()
        UsageCommands(commands, usage, config).register()
        ReminderCommands(commands, desk).register()
        LanguageCommands(commands, languages).register()
        MemoryCommands(
            commands, memory, memory_stores, remember, extractor, turns=running
        ).register()
        runner = TurnRunner(
            pipeline,
            sessions,
            config,
            commands,
            lanes=lanes,
            remembering=remember,
            running=running,
            compactor=compactor,
            languages=languages,
        )
        app = cls(
            settings,
            config,
            commands,
            tools,
            sessions,
            pipeline,
            runner,
            llm,
            memory,
            rag,
            indexer,
            embedder,
            extractor,
            memory_stores,
            disk,
            speech,
            reminders,
            languages,
            mcp,
            database=database,
            meter=meter,
            _starting=starting,
            _closing=closing,
        )
        if telegram is not None:
            app.telegram = _telegram_channel(telegram, app)
            readiness["telegram"] = app.telegram.health
            if choices is not None and app.telegram.voice_replies is not None:  # `/voice`
                _voice_choices_in(choices, app.telegram)
        if metrics is not None:
            readiness["lightrag"] = RagReadiness(config.current, rag)
            readiness["store"] = StoreReadiness(data, disk)
            if database is not None:
                readiness["database"] = DatabaseReadiness(database)
            _watch_queues(metrics, app, queue)
            app.ops = _ops_server(app, metrics, Readiness(readiness), settings)
        return app

    async def start(self) -> None:
        """Start background work: the index worker sends what earlier runs left queued.
        The Telegram channel, if any, is started by `telegram.start` (or `run_until_signalled`)
        after this. A database that cannot be reached stops it here (`DatabaseUnavailable`),
        before anything else has started."""
        if self.database is not None:
            await self.database.open()
        self.indexer.start()
        self._disk_retries = asyncio.create_task(self.disk.run_retries(), name="disk-retries")
        await self.reminders.start()
        for hook in self._starting:
            await hook()

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        await self.runner.handle(message, channel)

    async def aclose(self) -> None:
        """Finish memory writes, drain the index queue for a bounded time, close clients."""
        await self.reminders.stop()
        await self.extractor.drain()
        await self.memory.drain()
        if self._disk_retries is not None:
            self._disk_retries.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._disk_retries
        await self.disk.retry()  # a last try for what the disk refused; lost if it fails
        await self.indexer.stop()
        for hook in reversed(self._closing):  # the last made is closed first
            await hook()
        if self.database is not None:
            await self.database.close()


def _database(settings: Settings) -> Database | None:
    """PostgreSQL when `DATABASE_URL` names it; not connected until `BotApp.start`."""
    if settings.database_url is None:
        return None
    return Database(settings.database_url.get_secret_value())


def _telegram_channel(options: TelegramOptions, app: BotApp) -> TelegramBot:
    """The Telegram channel on `app` (PTB is imported only when it is used): its `/start`
    joins the commands, and its inbox, which keeps users' messages on disk until compacted,
    joins what `/forget all` empties."""
    from bot.adapters.telegram import StartCommand, TelegramBot
    from bot.adapters.telegram.voice_replies import VoiceCommand

    StartCommand(app.config).register(app.commands)
    inbox = _telegram_inbox(options, app)
    app.memory_stores.append(inbox)
    bot = TelegramBot(
        app.handle,
        app.config,
        app.commands.menu,
        options,
        inbox,
        app.speech,
        app.languages,
        app.meter,
    )
    # Reminders go out once the bot can send (its token checked at start).
    bot.on_started.append(lambda: app.reminders.deliver_through(bot.channel))
    if bot.voice_replies is not None:  # `/voice`: answers spoken in this chat, or not
        VoiceCommand(bot.voice_replies, app.config).register(app.commands)
    return bot


def _telegram_inbox(options: TelegramOptions, app: BotApp) -> TelegramInbox:
    """The inbox: a file in the data dir, or, with `DATABASE_URL`, a table that several
    processes on one token share, each chat handled by one of them at a time
    (`bot/adapters/postgres/inbox.py`, `docs/DEPLOYMENT.md`).

    Several processes: each also runs its own `ReminderScheduler` (`app.reminders`); only
    the one holding the reminders' advisory lock delivers (`ReminderLease`)."""
    from bot.adapters.postgres.inbox import PostgresUpdateInbox
    from bot.adapters.telegram import UpdateInbox, from_allowed_users
    from bot.adapters.telegram.inbox import chat_of, sender_of

    keep = from_allowed_users(app.config)
    if app.database is not None:
        return PostgresUpdateInbox(app.database, keep, chat_of, sender_of)
    return UpdateInbox(options.inbox_path, keep=keep)


def _voice_choices_in(choices: PostgresChoiceTables, bot: TelegramBot) -> None:
    """Each chat's `/voice` in PostgreSQL, as the other choices are with `DATABASE_URL`."""
    from bot.adapters.telegram.voice_replies import VoiceSwitch

    if bot.voice_replies is not None:
        store = choices.kind("voice", bool, "[Telegram] /voice")
        bot.voice_replies.switch = VoiceSwitch(None, store)


def _watch_queues(metrics: PrometheusMetrics, app: BotApp, queue: IndexQueueStore) -> None:
    """What the metrics read when scraped: queue depths, the RAG circuit, the disk."""
    metrics.watch("bot_index_queue_depth", "Documents waiting for LightRAG.", lambda: queue.depth)
    metrics.watch(
        "bot_index_queue_failed", "Documents LightRAG refused for good.", queue.failed_count
    )
    metrics.watch(
        "bot_disk_failing", "1 while a store's writes are refused.", lambda: app.disk.failing
    )
    metrics.watch(
        "bot_disk_unwritten", "Items kept in memory for a refusing disk.", app.disk.unwritten
    )
    if app.telegram is not None:
        inbox = app.telegram.inbox
        metrics.watch("bot_telegram_inbox_depth", "Updates received, not handled.", inbox.depth)
    if isinstance(app.rag, LightRagAdapter):
        breaker, config = app.rag.breaker, app.config
        metrics.watch_state(
            "bot_rag_circuit",
            "LightRAG's circuit breaker: 1 for its state (off: rag.enabled is false).",
            ["off", *(state.value for state in CircuitState)],
            lambda: breaker.state.value if config.current().rag.enabled else "off",
        )


def _ops_server(
    app: BotApp, metrics: PrometheusMetrics, readiness: Readiness, settings: Settings
) -> OpsServer:
    """The listener, started with the app and stopped first; while it runs, every log record
    at WARNING or above counts in `bot_errors_total`."""
    server = OpsServer(readiness, metrics)
    errors = metrics.error_counter()
    port = settings.http_port or 0

    async def start() -> None:
        logging.getLogger().addHandler(errors)
        await server.start(settings.http_listen, port)

    async def stop() -> None:
        await server.stop()
        logging.getLogger().removeHandler(errors)

    app._starting.append(start)
    app._closing.append(stop)
    return server


async def _log_refused_retrieval_style(rag: LightRagAdapter, config: RuntimeConfigStore) -> None:
    if config.current().rag.enabled:
        rag.retrieval_style(config.current())  # logs a refused `answer` style


def describe_endpoint(base_url: str | None) -> str:
    """Host and port of the LLM API for `/status`: never a path, query or credentials."""
    if not base_url:
        return "api.openai.com"
    parts = urlsplit(base_url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
