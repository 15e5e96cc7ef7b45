"""The core's parts that `BotApp.build` (bot/app.py) composes, each made whole by a function
that takes its collaborators: usage metering, memory, reminders, what answers a message (tools,
the turn's systems, commands, the runner), and the order in which they start and stop.
The adapters to the outside world, the Telegram channel and the operators' listener are made
in bot/wiring.py; the stores in bot/stores.py."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
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
from bot.lifecycle import Hook, Lifecycle
from bot.mcp.servers import McpServers
from bot.media.library import DocumentLibrary
from bot.media.reader import MediaReader
from bot.memory.llm_extraction import LlmFactExtractor
from bot.pipeline import Pipeline, System
from bot.pipeline.attachments import AttachmentSystem
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.inbox import TelegramInbox
from bot.ports.llm import LlmPort
from bot.ports.memory import UserMemoryStore
from bot.ports.metrics import MetricsObserver
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
from bot.stores import Memory, Stores
from bot.tools import Tool, ToolRegistry, builtin_tools
from bot.tools.memory import MemoryTool
from bot.tools.reminders import RemindersTool
from bot.tools.skill import SkillTool
from bot.turns import TurnRunner
from bot.usage.meter import UsageMeter
from bot.usage.metered import MeteredLlm
from bot.wiring import OutsideWorld, Part


@dataclass(frozen=True)
class Metering:
    """Usage counted per user and day, and refused at a user's daily budget."""

    llm: MeteredLlm
    """Every LLM call of the bot goes through it."""
    meter: UsageMeter
    """Speech heard and documents filed."""
    observer: MetricsObserver
    """The operators' metrics (`NO_METRICS` when the HTTP listener is off)."""


@dataclass(frozen=True)
class Remembering:
    """Short-term memory and the facts extracted into it; long-term memory through LightRAG."""

    memory: Memory
    extractor: LlmFactExtractor
    indexer: RagIndexer
    """Sends the durable queue to LightRAG, oldest first."""
    long_term: LongTermDocuments


@dataclass(frozen=True)
class Reminding:
    """The reminders: set through the desk, delivered by the scheduler in the chat's lane."""

    scheduler: ReminderScheduler
    desk: ReminderDesk
    lanes: ChatLanes
    """Shared with the runner, so a turn and a reminder never both write the session."""


@dataclass(frozen=True)
class Answering:
    """What answers a message: the tools, the turn's systems, the commands and the runner."""

    tools: ToolRegistry
    mcp: McpServers
    commands: CommandRegistry
    pipeline: Pipeline
    runner: TurnRunner
    memory_stores: list[UserMemoryStore]
    """What `/memory` counts and `/forget all` empties, per user."""


def metering(
    config: RuntimeConfigStore, stores: Stores, llm: LlmPort, observer: MetricsObserver
) -> Metering:
    """Every call of `llm` counted per user and day, and refused at a user's daily budget;
    speech heard and documents filed counted against the same budget."""
    metered = MeteredLlm(llm, stores.usage, lambda: config.current().usage, observer)
    return Metering(metered, UsageMeter(stores.usage, lambda: config.current().usage), observer)


def remembering(
    config: RuntimeConfigStore,
    stores: Stores,
    world: OutsideWorld,
    llm: LlmPort,
    clock: Callable[[], datetime],
    rag_is_back: asyncio.Event,
) -> Remembering:
    """Short-term memory (`# Memory`), dated by `clock`, with facts from one structured call
    of `llm`; long-term memory through LightRAG (`# Relevant Memory`), fed by a durable queue
    whose worker tries again at once when `rag_is_back`."""
    memory = stores.memory(lambda: config.current().memory, world.embedder, clock)
    queue, ledger = stores.index_queue, stores.index_ledger
    return Remembering(
        memory,
        LlmFactExtractor(llm, config.current, memory),
        RagIndexer(queue, world.rag, ledger, config, back=rag_is_back),
        LongTermDocuments(queue, ledger, world.rag),
    )


def reminding(
    config: RuntimeConfigStore, stores: Stores, clock: Callable[[], datetime]
) -> Reminding:
    """Reminders set by `clock` through the desk and fired by the scheduler, each in its
    chat's turn lane."""
    lanes = ChatLanes()
    scheduler = ReminderScheduler(
        stores.reminders, stores.sessions, lanes, clock, stores.languages, stores.lease
    )
    desk = ReminderDesk(
        stores.reminders, lambda: config.current().reminders, clock, on_change=scheduler.wake
    )
    return Reminding(scheduler, desk, lanes)


def answering(
    settings: Settings,
    config: RuntimeConfigStore,
    stores: Stores,
    world: OutsideWorld,
    mind: Remembering,
    metering: Metering,
    reminding: Reminding,
    inbox: TelegramInbox | None,
    disk: DiskHealth,
    environ: Mapping[str, str] | None,
) -> Answering:
    """The tools, the turn's systems, the commands, and the runner that drives a message
    through them. `/forget all` empties the Telegram `inbox` too, when there is one."""
    tools, skills, mcp = _tools(settings, config, stores, mind, reminding.desk, environ)
    context = ContextBuildingSystem(
        PromptFiles(settings.prompts_dir), tools, mind.memory, world.rag, skills
    )
    compactor = SessionCompactor(metering.llm)  # older turns become a summary (`/compact`)
    systems = _systems(context, tools, stores, mind, metering, compactor)
    pipeline = Pipeline(systems, metering.observer)
    commands = CommandRegistry()
    running = RunningTurns()  # what `/stop`, `/new` and `/forget all` stop
    rag_status = RagStatus(
        config, world.rag, stores.index_queue, mind.long_term, stores.index_ledger.owner_count
    )
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
    _register_commands(commands, config, stores, skills, reminding.desk)
    memory_stores: list[UserMemoryStore] = [mind.memory, mind.long_term, stores.sessions]
    memory_stores += [stores.reminders, *([inbox] if inbox is not None else [])]
    MemoryCommands(
        commands, mind.memory, memory_stores, stores.remember, mind.extractor, turns=running
    ).register()
    runner = TurnRunner(
        pipeline,
        stores.sessions,
        config,
        commands,
        lanes=reminding.lanes,
        remembering=stores.remember,
        running=running,
        compactor=compactor,
        languages=stores.languages,
    )
    return Answering(tools, mcp, commands, pipeline, runner, memory_stores)


def _tools(
    settings: Settings,
    config: RuntimeConfigStore,
    stores: Stores,
    mind: Remembering,
    desk: ReminderDesk,
    environ: Mapping[str, str] | None,
) -> tuple[ToolRegistry, SkillLibrary, McpServers]:
    """The built-in tools, memory's, the skills', the reminders', and those of the MCP servers
    (`mcp.servers`; a server that fails never holds up an answer). `environ`: what `${NAME}`
    in a server's config reads (default: the process's)."""
    skills = SkillLibrary(settings.skills_dir)
    memory = MemoryTool(mind.memory, stores.remember, [mind.long_term])  # forgets in both
    own: list[Tool] = [memory, SkillTool(skills), RemindersTool(desk)]
    tools = ToolRegistry([*builtin_tools(), *own])
    mcp = McpServers(lambda: config.current().mcp, os.environ if environ is None else environ)
    tools.add_source(mcp)
    return tools, skills, mcp


def _systems(
    context: ContextBuildingSystem,
    tools: ToolRegistry,
    stores: Stores,
    mind: Remembering,
    metering: Metering,
    compactor: SessionCompactor,
) -> list[System]:
    """A turn's systems, in the order they run (each has its `order`); `metering.meter` counts
    the documents filed, `compactor` summarises older turns when the context runs full."""
    llm, memory = metering.llm, mind.memory
    return [
        AttachmentSystem(MediaReader(), DocumentLibrary(mind.indexer, memory), metering.meter),
        context,
        ToolLoopSystem(llm, tools, stores.chat_models, prompt=context, compactor=compactor),
        MemoryPersistSystem(memory, mind.extractor),
        RagIndexingSystem(mind.indexer),
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


def start_and_stop(
    stores: Stores,
    reminders: ReminderScheduler,
    world: OutsideWorld,
    mcp: McpServers,
    ops: Part,
    mind: Remembering,
    disk: DiskHealth,
) -> Lifecycle:
    """Started in this order, stopped in reverse: the stores first (a database that cannot
    be reached stops the start before anything else), so they are the last to close."""
    order = Lifecycle()
    order.add(stores.open, stores.close)
    # The reminders need only the stores: stopped just before them, deliveries under way
    # still find them open.
    order.add(reminders.start, reminders.stop)
    for part in [*world.parts, (mcp.start, mcp.aclose), ops]:
        order.add(*part)
    order.add(_started(mind.indexer.start), mind.indexer.stop)  # sends what earlier runs queued
    order.add_task("disk-retries", disk.run_retries, then=disk.retry)  # a last try
    order.add(stop=mind.memory.drain)
    order.add(stop=mind.extractor.drain)  # before memory's, which it writes to
    return order


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
