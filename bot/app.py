"""The composition root: the one place that knows every concrete class and wires them.

`BotApp.build` reads as the recipe, part by part; each part is made whole, with every
collaborator handed to its constructor, by a function of bot/assembly.py (the core),
bot/wiring.py (the outside world, Telegram, the operators' listener) or bot/stores.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from bot import assembly
from bot.assembly import Answering, Remembering, Reminding, describe_endpoint
from bot.commands import CommandRegistry
from bot.config import RuntimeConfigStore
from bot.conversation import IncomingMessage
from bot.conversation.messages import utc_now
from bot.lifecycle import Lifecycle
from bot.mcp.servers import McpServers
from bot.memory.llm_extraction import LlmFactExtractor
from bot.pipeline import Pipeline
from bot.ports.channel import ChannelPort
from bot.ports.embeddings import EmbeddingPort
from bot.ports.llm import LlmPort
from bot.ports.memory import UserMemoryStore
from bot.ports.metrics import NO_METRICS
from bot.ports.speech import SpeechPort
from bot.rag.indexer import RagIndexer
from bot.reminders.scheduler import ReminderScheduler
from bot.settings import Settings
from bot.storage.disk import DiskHealth
from bot.storage.languages import LanguageChoices
from bot.stores import ChatSessions, Memory, Stores, stores_for
from bot.tools import ToolRegistry
from bot.turns import TurnRunner
from bot.wiring import (
    OutsideWorld,
    RagServer,
    build_telegram,
    operators_listener,
    outside_world,
    telegram_inbox,
)

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions
    from bot.ops.metrics import PrometheusMetrics
    from bot.ops.server import OpsServer

log = logging.getLogger(__name__)

__all__ = ["BotApp", "ChatSessions", "RagServer", "describe_endpoint"]


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
    stores: Stores
    """Everything the bot keeps, on files or PostgreSQL (`bot/stores.py`)."""
    lifecycle: Lifecycle
    """The parts `start` starts in order and `aclose` stops in reverse."""
    telegram: TelegramBot | None
    """The Telegram channel driving the app, when it was built for Telegram."""
    ops: OpsServer | None
    """`/healthz`, `/readyz` and `/metrics`, when `HTTP_PORT` is set (started by `start`)."""

    def __init__(
        self,
        settings: Settings,
        config: RuntimeConfigStore,
        stores: Stores,
        world: OutsideWorld,
        mind: Remembering,
        answering: Answering,
        reminding: Reminding,
        disk: DiskHealth,
        lifecycle: Lifecycle,
        telegram: TelegramBot | None = None,
        ops: OpsServer | None = None,
    ) -> None:
        """What `build` made, under the names channels, tests and benchmarks reach it by."""
        self.settings, self.config, self.stores = settings, config, stores
        self.sessions, self.languages = stores.sessions, stores.languages
        self.llm, self.embedder, self.rag = world.llm, world.embedder, world.rag
        self.speech, self.disk = world.speech, disk
        self.memory, self.extractor, self.indexer = mind.memory, mind.extractor, mind.indexer
        self.tools, self.mcp, self.commands = answering.tools, answering.mcp, answering.commands
        self.pipeline, self.runner = answering.pipeline, answering.runner
        self.memory_stores, self.reminders = answering.memory_stores, reminding.scheduler
        self.lifecycle, self.telegram, self.ops = lifecycle, telegram, ops

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
        metering = assembly.metering(config, stores, world.llm, metrics or NO_METRICS)
        mind = assembly.remembering(config, stores, world, metering.llm, clock, rag_is_back)
        reminding = assembly.reminding(config, stores, clock)
        inbox = telegram_inbox(telegram, stores, config) if telegram is not None else None
        answering = assembly.answering(
            settings, config, stores, world, mind, metering, reminding, inbox, disk, environ
        )
        bot = None
        if telegram is not None and inbox is not None:
            handle, commands = answering.runner.handle, answering.commands
            meter, reminders = metering.meter, reminding.scheduler
            bot = build_telegram(
                telegram, inbox, handle, config, commands, stores, world, meter, reminders
            )
        ops, ops_part = operators_listener(
            settings, metrics, config, world, stores, disk, inbox, bot
        )
        lifecycle = assembly.start_and_stop(
            stores, reminding.scheduler, world, answering.mcp, ops_part, mind, disk
        )
        return cls(
            settings, config, stores, world, mind, answering, reminding, disk, lifecycle, bot, ops
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


def _prometheus() -> PrometheusMetrics:
    """The metrics, with `prometheus-client` imported only now: a bot with no `HTTP_PORT`
    records nothing and never loads it."""
    from bot.ops.metrics import PrometheusMetrics

    return PrometheusMetrics()
