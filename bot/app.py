"""The composition root: the one place that knows every concrete class and wires them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.adapters.embeddings.configured import ConfiguredEmbedder
from bot.adapters.lightrag import LightRagAdapter
from bot.adapters.openai_llm import OpenAiLlm
from bot.adapters.openai_speech import OpenAiSpeech
from bot.commands import CommandRegistry, CoreCommands
from bot.commands.memory import MemoryCommands
from bot.commands.model import ModelCommands
from bot.commands.usage import UsageCommands
from bot.config import RuntimeConfigStore
from bot.conversation import IncomingMessage
from bot.conversation.compaction import SessionCompactor
from bot.media.library import DocumentLibrary
from bot.media.reader import MediaReader
from bot.memory.llm_extraction import LlmFactExtractor
from bot.memory.remember_switch import RememberSwitch
from bot.memory.service import ShortTermMemory
from bot.pipeline import Pipeline
from bot.pipeline.attachments import AttachmentSystem
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.channel import ChannelPort
from bot.ports.llm import LlmPort
from bot.ports.memory import UserMemoryStore
from bot.prompts import PromptFiles
from bot.rag.indexer import RagIndexer
from bot.rag.ledger import IndexLedger
from bot.rag.long_term import LongTermDocuments
from bot.rag.queue import IndexQueue
from bot.rag.status import RagStatus
from bot.running_turns import RunningTurns
from bot.settings import Settings
from bot.storage.chat_models import ChatModels
from bot.storage.disk import DiskHealth
from bot.storage.sessions import JsonSessionStore
from bot.tools import ToolRegistry, builtin_tools
from bot.tools.memory import MemoryTool
from bot.turns import TurnRunner
from bot.usage.ledger import UsageLedger
from bot.usage.metered import MeteredLlm

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions

log = logging.getLogger(__name__)


@dataclass
class BotApp:
    """A built bot: `start` it, hand it messages from any channel with `handle`, `aclose` it."""

    settings: Settings
    config: RuntimeConfigStore
    commands: CommandRegistry
    tools: ToolRegistry
    sessions: JsonSessionStore
    pipeline: Pipeline
    runner: TurnRunner
    llm: LlmPort
    memory: ShortTermMemory
    rag: LightRagAdapter
    indexer: RagIndexer
    embedder: ConfiguredEmbedder
    extractor: LlmFactExtractor
    memory_stores: list[UserMemoryStore]
    """What `/memory` counts and `/forget all` empties; a channel may add its own."""
    disk: DiskHealth
    speech: OpenAiSpeech
    """Voice notes to text and answers to speech, for channels that carry audio."""
    _disk_retries: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls, settings: Settings, llm: LlmPort | None = None, disk: DiskHealth | None = None
    ) -> BotApp:
        """Wire the bot from settings; `llm` replaces the OpenAI adapter (tests, benchmarks);
        `disk` is told what the disk refused, from the start (the lock file) on."""
        data = settings.data_dir
        disk = disk or DiskHealth()
        config = RuntimeConfigStore(settings.runtime_config_path)
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        if llm is None:
            llm = OpenAiLlm.connect(key, settings.openai_base_url)
        # Every LLM call is counted per user and day, and refused at a user's daily budget.
        usage = UsageLedger(data / "usage")
        metered = MeteredLlm(llm, usage, lambda: config.current().usage)

        # Short-term memory (`# Memory`, order 50) and the per-user "remember off" switch;
        # `memory.embeddings` picks the model that gives recall its sense of meaning.
        embeddings_key = settings.embeddings_api_key
        embedder = ConfiguredEmbedder(
            lambda: config.current().memory.embeddings,
            embeddings_key.get_secret_value() if embeddings_key else key,
            settings.openai_base_url,
        )
        memory = ShortTermMemory(
            data / "memory", lambda: config.current().memory, embedder=embedder
        )
        # Facts in any words: one structured LLM call after quick turns (`memory.extraction`).
        extractor = LlmFactExtractor(metered, config.current, memory)
        remember = RememberSwitch(data / "memory" / "remember-off.json")

        # Long-term memory through LightRAG (`# Relevant Memory`, order 55).
        ledger = IndexLedger(data / "rag" / "ledger", disk)
        rag = LightRagAdapter(config, settings.rag_api_key, owners=ledger.owner_count)
        queue = IndexQueue(data / "rag" / "queue", disk)
        indexer = RagIndexer(queue, rag, ledger, config)
        rag.breaker.on_recovery = indexer.server_is_back  # queued documents go once it is back
        long_term = LongTermDocuments(queue, ledger, rag)
        # What `/memory` counts and `/forget all` empties, per user.
        sessions = JsonSessionStore(data / "sessions", disk=disk)
        memory_stores: list[UserMemoryStore] = [memory, long_term, sessions]

        # Voice notes in, spoken answers out (`speech`); its own key, else the LLM's.
        speech_key = settings.speech_api_key
        speech = OpenAiSpeech(
            speech_key.get_secret_value() if speech_key else key, settings.openai_base_url
        )

        tools = ToolRegistry([*builtin_tools(), MemoryTool(memory, remember)])
        chat_models = ChatModels(data / "chat-models.json")  # `/model`
        pipeline = Pipeline(
            [
                AttachmentSystem(MediaReader(), DocumentLibrary(indexer, memory)),
                ContextBuildingSystem(PromptFiles(settings.prompts_dir), tools, memory, rag),
                ToolLoopSystem(metered, tools, chat_models),
                MemoryPersistSystem(memory, extractor),
                RagIndexingSystem(indexer),
                ResponseRoutingSystem(),
            ]
        )
        rag_status = RagStatus(config, rag, queue, long_term, ledger.owner_count)
        commands = CommandRegistry()
        running = RunningTurns()  # what `/stop`, `/new` and `/forget all` stop
        compactor = SessionCompactor(metered)  # older turns become a summary (`/compact`)
        CoreCommands(
            registry=commands,
            sessions=sessions,
            config=config,
            tools=tools,
            llm_endpoint=describe_endpoint(settings.openai_base_url),
            status_providers=[disk, remember, rag_status],
            turns=running,
            compactor=compactor,
            models=chat_models,
        ).register()
        ModelCommands(commands, chat_models, config).register()
        UsageCommands(commands, usage, config).register()
        MemoryCommands(
            commands, memory, memory_stores, remember, extractor, turns=running
        ).register()
        runner = TurnRunner(
            pipeline,
            sessions,
            config,
            commands,
            remembering=remember,
            running=running,
            compactor=compactor,
        )
        return cls(
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
        )

    async def start(self) -> None:
        """Start background work: the index worker sends what earlier runs left queued."""
        self.indexer.start()
        self._disk_retries = asyncio.create_task(self.disk.run_retries(), name="disk-retries")
        await self.embedder.warm_up()
        if self.config.current().rag.enabled:
            self.rag.retrieval_style(self.config.current())  # logs a refused `answer` style

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        await self.runner.handle(message, channel)

    def telegram_bot(self, options: TelegramOptions) -> TelegramBot:
        """The Telegram channel driving this app (PTB is imported only when it is used)."""
        from bot.adapters.telegram import TelegramBot

        bot = TelegramBot(self.handle, self.config, self.commands, options, self.speech)
        if bot.inbox is not None:  # it keeps users' messages on disk until compacted
            self.memory_stores.append(bot.inbox)
        return bot

    async def aclose(self) -> None:
        """Finish memory writes, drain the index queue for a bounded time, close clients."""
        await self.extractor.drain()
        await self.memory.drain()
        if self._disk_retries is not None:
            self._disk_retries.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._disk_retries
        await self.disk.retry()  # a last try for what the disk refused; lost if it fails
        await self.indexer.stop()
        await self.rag.aclose()
        await self.embedder.close()
        await self.speech.close()
        close = getattr(self.llm, "close", None)
        if close is not None:
            await close()


def describe_endpoint(base_url: str | None) -> str:
    """Host and port of the LLM API for `/status`: never a path, query or credentials."""
    if not base_url:
        return "api.openai.com"
    parts = urlsplit(base_url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
