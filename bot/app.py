"""The composition root: the one place that knows every concrete class and wires them."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

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
from bot.lifecycle import Hook, Lifecycle
from bot.mcp.servers import McpServers
from bot.media.library import DocumentLibrary
from bot.media.reader import MediaReader
from bot.memory.llm_extraction import LlmFactExtractor
from bot.ops.checks import RagReadiness, StoreReadiness
from bot.ops.readiness import Readiness
from bot.pipeline import Pipeline, System
from bot.pipeline.attachments import AttachmentSystem
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.channel import ChannelPort
from bot.ports.embeddings import EmbeddingPort
from bot.ports.llm import LlmPort
from bot.ports.memory import UserMemoryStore
from bot.ports.metrics import NO_METRICS, MetricsObserver
from bot.ports.speech import SpeechPort
from bot.prompts import PromptFiles
from bot.rag.indexer import RagIndexer
from bot.rag.long_term import LongTermDocuments
from bot.rag.status import RagStatus
from bot.reminders import ReminderDesk
from bot.reminders.scheduler import ReminderScheduler
from bot.running_turns import RunningTurns
from bot.settings import Settings
from bot.skills import SkillLibrary
from bot.storage.disk import DiskHealth
from bot.storage.languages import LanguageChoices
from bot.stores import ChatSessions, Memory, Stores, stores_for
from bot.tools import ToolRegistry, builtin_tools
from bot.tools.memory import MemoryTool
from bot.tools.reminders import RemindersTool
from bot.tools.skill import SkillTool
from bot.turns import TurnRunner
from bot.usage.meter import UsageMeter
from bot.usage.metered import MeteredLlm
from bot.wiring import (
    NO_PART,
    RagServer,
    build_telegram,
    ops_server,
    outside_world,
    telegram_inbox,
    watch_queues,
)

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions
    from bot.ops.metrics import PrometheusMetrics
    from bot.ops.server import OpsServer

log = logging.getLogger(__name__)

__all__ = ["BotApp", "ChatSessions", "RagServer", "describe_endpoint"]


@dataclass
class BotApp:
    """A built bot: `async with` it (or `start` and `aclose` it), and hand it messages from
    any channel with `handle`."""

    settings: Settings
    config: RuntimeConfigStore
    commands: CommandRegistry
    tools: ToolRegistry
    sessions: ChatSessions
    pipeline: Pipeline
    runner: TurnRunner
    llm: LlmPort
    memory: Memory
    rag: RagServer
    indexer: RagIndexer
    embedder: EmbeddingPort
    extractor: LlmFactExtractor
    memory_stores: list[UserMemoryStore]
    """What `/memory` counts and `/forget all` empties, the Telegram inbox included."""
    disk: DiskHealth
    speech: SpeechPort
    """Voice notes to text and answers to speech, for channels that carry audio."""
    reminders: ReminderScheduler
    """Delivers due reminders through the channels handed to `reminders.deliver_through`."""
    languages: LanguageChoices
    """Each user's `/language` (`stores.languages`), what everything the bot says is in."""
    mcp: McpServers
    """The MCP servers of the runtime config (`mcp.servers`), whose tools join the registry."""
    meter: UsageMeter
    """Counts transcriptions and filed documents against each user's daily budget."""
    stores: Stores
    """Everything the bot keeps, on files or PostgreSQL (`bot/stores.py`)."""
    lifecycle: Lifecycle = field(repr=False)
    """The parts `start` starts in order and `aclose` stops in reverse."""
    telegram: TelegramBot | None = None
    """The Telegram channel driving the app, when it was built for Telegram."""
    ops: OpsServer | None = None
    """`/healthz`, `/readyz` and `/metrics`, when `HTTP_PORT` is set (started by `start`)."""

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
        stores: Stores | None = None,
        telegram: TelegramOptions | None = None,
        clock: Callable[[], datetime] = utc_now,
        environ: Mapping[str, str] | None = None,
    ) -> BotApp:
        """Wire the bot from settings, with the adapters and stores given in place of the
        real ones (each left out is made from `settings`: `outside_world`, `stores_for`).

        `disk` is told what the disk refused, from the start (the lock file) on. `telegram`:
        the bot runs in Telegram (`app.telegram`), with `/start`, `/voice` and the inbox wired in.
        `clock` (UTC now) is what reminders are set and fired by and what memory dates its
        items and weighs their recency by; tests and benchmarks move a fake one.
        `environ`: what `${NAME}` in an MCP server's config reads (default: the process's).
        """
        disk = disk or DiskHealth()
        stores = stores or stores_for(settings, disk)
        config = RuntimeConfigStore(settings.runtime_config_path)
        rag_is_back = asyncio.Event()  # LightRAG answers again: the index worker tries at once
        world = outside_world(settings, config, stores, rag_is_back, llm, embedder, rag, speech)
        # Operators' metrics only when the HTTP listener serves them; else nothing is recorded.
        metrics = _prometheus() if settings.http_port is not None else None
        observer: MetricsObserver = metrics or NO_METRICS
        # Every LLM call is counted per user and day, and refused at a user's daily budget.
        metered = MeteredLlm(world.llm, stores.usage, lambda: config.current().usage, observer)
        meter = UsageMeter(stores.usage, lambda: config.current().usage)  # speech, documents filed
        # Short-term memory (`# Memory`), dated by `clock`; facts from one structured LLM call.
        memory = stores.memory(lambda: config.current().memory, world.embedder, clock)
        extractor = LlmFactExtractor(metered, config.current, memory)
        # Long-term memory through LightRAG (`# Relevant Memory`), fed by a durable queue.
        queue, ledger = stores.index_queue, stores.index_ledger
        indexer = RagIndexer(queue, world.rag, ledger, config, back=rag_is_back)
        long_term = LongTermDocuments(queue, ledger, world.rag)
        inbox = telegram_inbox(telegram, stores, config) if telegram is not None else None
        # What `/memory` counts and `/forget all` empties, per user.
        memory_stores: list[UserMemoryStore] = [memory, long_term, stores.sessions]
        memory_stores += [stores.reminders, *([inbox] if inbox is not None else [])]
        # Reminders go through the chat's turn lane (shared with the runner), so a turn and a
        # reminder never both write the session.
        lanes = ChatLanes()
        reminders = ReminderScheduler(
            stores.reminders, stores.sessions, lanes, clock, stores.languages, stores.lease
        )
        desk = ReminderDesk(
            stores.reminders, lambda: config.current().reminders, clock, on_change=reminders.wake
        )
        skills = SkillLibrary(settings.skills_dir)
        tools = ToolRegistry([*builtin_tools(), MemoryTool(memory, stores.remember)])
        tools.register(SkillTool(skills))
        tools.register(RemindersTool(desk))
        # Tools from MCP servers (`mcp.servers`); a server that fails never holds up an answer.
        mcp = McpServers(lambda: config.current().mcp, os.environ if environ is None else environ)
        tools.add_source(mcp)
        prompts = PromptFiles(settings.prompts_dir)
        context = ContextBuildingSystem(prompts, tools, memory, world.rag, skills)
        compactor = SessionCompactor(metered)  # older turns become a summary (`/compact`)
        systems = _systems(
            context, metered, tools, memory, extractor, indexer, stores, meter, compactor
        )
        pipeline = Pipeline(systems, observer)
        commands = CommandRegistry()
        running = RunningTurns()  # what `/stop`, `/new` and `/forget all` stop
        rag_status = RagStatus(config, world.rag, queue, long_term, ledger.owner_count)
        CoreCommands(
            registry=commands,
            sessions=stores.sessions,
            config=config,
            tools=tools,
            llm_endpoint=describe_endpoint(settings.openai_base_url),
            status_providers=[disk, *stores.status, stores.remember, rag_status, skills, mcp],
            turns=running,
            compactor=compactor,
            models=stores.chat_models,
        ).register()
        _register_commands(commands, config, stores, skills, desk)
        MemoryCommands(
            commands, memory, memory_stores, stores.remember, extractor, turns=running
        ).register()
        runner = TurnRunner(
            pipeline,
            stores.sessions,
            config,
            commands,
            lanes=lanes,
            remembering=stores.remember,
            running=running,
            compactor=compactor,
            languages=stores.languages,
        )
        bot = None
        readiness = dict(world.readiness)
        if telegram is not None and inbox is not None:
            bot = build_telegram(
                telegram, inbox, runner.handle, config, commands, stores, world, meter, reminders
            )
            readiness["telegram"] = bot.health
        ops, ops_part = None, NO_PART
        if metrics is not None:
            readiness["lightrag"] = RagReadiness(config.current, world.rag)
            readiness["store"] = StoreReadiness(settings.data_dir, disk)
            watch_queues(metrics, disk, queue, inbox, world.rag, config)
            ops, ops_part = ops_server(settings, metrics, Readiness(readiness | stores.readiness))

        # Started in this order, stopped in reverse: the stores first (a database that cannot
        # be reached stops the start before anything else), so they are the last to close.
        lifecycle = Lifecycle()
        lifecycle.add(stores.open, stores.close)
        # The scheduler's loop must have run before it is stopped: stopped while its first
        # look is under way, it can miss the cancellation (seen with PostgreSQL's lease).
        lifecycle.add(reminders.start, reminders.stop)
        for part in [*world.parts, (mcp.start, mcp.aclose), ops_part]:
            lifecycle.add(*part)
        lifecycle.add(_started(indexer.start), indexer.stop)  # sends what earlier runs queued
        lifecycle.add_task("disk-retries", disk.run_retries, then=disk.retry)  # a last try
        lifecycle.add(stop=memory.drain)
        lifecycle.add(stop=extractor.drain)  # before memory's, which it writes to
        return cls(
            settings,
            config,
            commands,
            tools,
            stores.sessions,
            pipeline,
            runner,
            world.llm,
            memory,
            world.rag,
            indexer,
            world.embedder,
            extractor,
            memory_stores,
            disk,
            world.speech,
            reminders,
            stores.languages,
            mcp,
            meter,
            stores,
            lifecycle,
            telegram=bot,
            ops=ops,
        )

    async def start(self) -> None:
        """Start every part in order (`lifecycle`). The Telegram channel, if any, is started
        by `telegram.start` (or `run_until_signalled`) after this. A database that cannot be
        reached stops it first (`DatabaseUnavailable`), before anything else has started."""
        await self.lifecycle.start()

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        await self.runner.handle(message, channel)

    async def aclose(self) -> None:
        """Stop every part in reverse: memory writes, the disk's last retry, the index queue
        drained for a bounded time, the clients, the reminders, the stores last."""
        await self.lifecycle.aclose()

    async def __aenter__(self) -> BotApp:
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _systems(
    context: ContextBuildingSystem,
    llm: LlmPort,
    tools: ToolRegistry,
    memory: Memory,
    extractor: LlmFactExtractor,
    indexer: RagIndexer,
    stores: Stores,
    meter: UsageMeter,
    compactor: SessionCompactor,
) -> list[System]:
    """A turn's systems, in the order they run (each has its `order`); `meter` counts the
    documents filed, `compactor` summarises older turns when the context runs full."""
    return [
        AttachmentSystem(MediaReader(), DocumentLibrary(indexer, memory), meter),
        context,
        ToolLoopSystem(llm, tools, stores.chat_models, prompt=context, compactor=compactor),
        MemoryPersistSystem(memory, extractor),
        RagIndexingSystem(indexer),
        ResponseRoutingSystem(),
    ]


def _register_commands(
    commands: CommandRegistry,
    config: RuntimeConfigStore,
    stores: Stores,
    skills: SkillLibrary,
    desk: ReminderDesk,
) -> None:
    """The commands that need no more than the stores, the skills and the reminders' desk."""
    ModelCommands(commands, stores.chat_models, config).register()
    SkillCommands(commands, skills, stores.sessions).register()
    UsageCommands(commands, stores.usage, config).register()
    ReminderCommands(commands, desk).register()
    LanguageCommands(commands, stores.languages).register()


def _prometheus() -> PrometheusMetrics:
    """The metrics, with `prometheus-client` imported only now: a bot with no `HTTP_PORT`
    records nothing and never loads it."""
    from bot.ops.metrics import PrometheusMetrics

    return PrometheusMetrics()


def _started(start: Callable[[], None]) -> Hook:
    """An async start for a part whose start only schedules its task."""

    async def started() -> None:
        start()

    return started


def describe_endpoint(base_url: str | None) -> str:
    """Host and port of the LLM API for `/status`: never a path, query or credentials."""
    if not base_url:
        return "api.openai.com"
    parts = urlsplit(base_url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
