"""The pieces of the composition root that `BotApp.build` (bot/app.py) calls: the adapters to
the outside world, the Telegram channel and the operators' listener, each built whole, with
every collaborator handed to its constructor."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import SecretStr

from bot.adapters.embeddings.configured import ConfiguredEmbedder
from bot.adapters.lightrag import LightRagAdapter
from bot.adapters.openai_llm import OpenAiLlm
from bot.adapters.openai_speech import OpenAiSpeech
from bot.commands import CommandRegistry
from bot.config import RuntimeConfigStore
from bot.lifecycle import Hook
from bot.ops.checks import RagReadiness, StoreReadiness
from bot.ops.readiness import Readiness
from bot.ports.embeddings import EmbeddingPort
from bot.ports.health import HealthCheck
from bot.ports.inbox import TelegramInbox
from bot.ports.llm import LlmPort
from bot.ports.rag import (
    IndexQueueStore,
    RagDocumentStore,
    RagHealthCheck,
    RagRecall,
    RagUploads,
)
from bot.ports.speech import SpeechPort
from bot.rag.circuit import CircuitBreaker, CircuitState
from bot.reminders.scheduler import ReminderScheduler
from bot.settings import Settings
from bot.storage.disk import DiskHealth
from bot.stores import Stores
from bot.usage.meter import UsageMeter

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions
    from bot.adapters.telegram.handlers import MessageHandlerFn
    from bot.ops.metrics import PrometheusMetrics
    from bot.ops.server import OpsServer

Part = tuple[Hook | None, Hook | None]
"""What starts a part of the app and what stops it (`Lifecycle.add`)."""
NO_PART: Part = (None, None)


class RagServer(RagRecall, RagUploads, RagDocumentStore, RagHealthCheck, Protocol):
    """The one long-term memory server, as the app hands it to recall, the index worker,
    `/forget` and `/status` (each of which sees only its own port)."""


@dataclass
class OutsideWorld:
    """The adapters to services outside the bot. Each one handed in is the caller's to
    close; each made here from the settings is started and stopped with the app (`parts`)."""

    llm: LlmPort
    embedder: EmbeddingPort
    rag: RagServer
    speech: SpeechPort
    parts: list[Part] = field(default_factory=list)
    readiness: dict[str, HealthCheck] = field(default_factory=dict)


def outside_world(
    settings: Settings,
    config: RuntimeConfigStore,
    stores: Stores,
    rag_is_back: asyncio.Event,
    llm: LlmPort | None,
    embedder: EmbeddingPort | None,
    rag: RagServer | None,
    speech: SpeechPort | None,
) -> OutsideWorld:
    """The LLM, the embedder `memory.embeddings` names, LightRAG (its circuit breaker sets
    `rag_is_back` when the server answers again) and speech: those handed in, else made."""
    key = _secret(settings.openai_api_key)
    made: list[Part] = []
    readiness: dict[str, HealthCheck] = {}
    if llm is None:
        openai_llm = OpenAiLlm.connect(key, settings.openai_base_url)
        made.append((None, openai_llm.close))
        readiness["llm"] = openai_llm.health
        llm = openai_llm
    if embedder is None:
        configured = ConfiguredEmbedder(
            lambda: config.current().memory.embeddings,
            _secret(settings.embeddings_api_key) or key,
            settings.openai_base_url,
        )
        made.append((configured.warm_up, configured.close))
        embedder = configured
    if rag is None:
        lightrag = LightRagAdapter(
            config,
            settings.rag_api_key,
            breaker=CircuitBreaker(on_recovery=rag_is_back.set),
            owners=stores.index_ledger.owner_count,
            held=stores.index_ledger.held,
        )
        made.append((lambda: _log_refused_retrieval_style(lightrag, config), lightrag.aclose))
        rag = lightrag
    if speech is None:  # voice notes in, spoken answers out; its own key, else the LLM's
        openai_speech = OpenAiSpeech(
            _secret(settings.speech_api_key) or key, settings.openai_base_url
        )
        made.append((None, openai_speech.close))
        speech = openai_speech
    return OutsideWorld(llm, embedder, rag, speech, made, readiness)


def _secret(value: SecretStr | None) -> str | None:
    """The secret's text; None when it is unset or empty."""
    return value.get_secret_value() if value else None


async def _log_refused_retrieval_style(rag: LightRagAdapter, config: RuntimeConfigStore) -> None:
    if config.current().rag.enabled:
        rag.retrieval_style(config.current())  # logs a refused `answer` style


def telegram_inbox(
    options: TelegramOptions, stores: Stores, config: RuntimeConfigStore
) -> TelegramInbox:
    """Where received updates wait: it keeps users' messages until compacted, so it joins
    what `/forget all` empties. Only allowed users' updates are kept."""
    from bot.adapters.telegram import from_allowed_users  # PTB only for Telegram

    return stores.inbox(options.inbox_path, from_allowed_users(config))


def build_telegram(
    options: TelegramOptions,
    inbox: TelegramInbox,
    handle: MessageHandlerFn,
    config: RuntimeConfigStore,
    commands: CommandRegistry,
    stores: Stores,
    world: OutsideWorld,
    meter: UsageMeter,
    reminders: ReminderScheduler,
) -> TelegramBot:
    """The Telegram channel driving `handle`, hearing and speaking through `world.speech`:
    its `/start` and `/voice` join the commands, `meter` counts its transcriptions, and due
    reminders go out through it once it can send."""
    from bot.adapters.telegram import StartCommand, TelegramBot
    from bot.adapters.telegram.voice_replies import VoiceCommand, VoiceSwitch

    StartCommand(config).register(commands)
    voice = VoiceSwitch(None, stores.voice)
    VoiceCommand(voice, config).register(commands)
    return TelegramBot(
        handle,
        config,
        commands.menu,
        options,
        inbox,
        world.speech,
        stores.languages,
        voice,
        meter,
        on_started=reminders.deliver_through,
    )


def operators_listener(
    settings: Settings,
    metrics: PrometheusMetrics | None,
    config: RuntimeConfigStore,
    world: OutsideWorld,
    stores: Stores,
    disk: DiskHealth,
    inbox: TelegramInbox | None,
    telegram: TelegramBot | None,
) -> tuple[OpsServer | None, Part]:
    """`/healthz`, `/readyz` and `/metrics` when there are `metrics` (`HTTP_PORT` is set), and
    how the listener starts and stops: `/readyz` checks each part that can be down, and the
    metrics read the queues, the RAG circuit and the disk when scraped."""
    if metrics is None:
        return None, NO_PART
    readiness = dict(world.readiness)
    if telegram is not None:
        readiness["telegram"] = telegram.health
    readiness["lightrag"] = RagReadiness(config.current, world.rag)
    readiness["store"] = StoreReadiness(settings.data_dir, disk)
    watch_queues(metrics, disk, stores.index_queue, inbox, world.rag, config)
    return ops_server(settings, metrics, Readiness(readiness | stores.readiness))


def ops_server(
    settings: Settings, metrics: PrometheusMetrics, readiness: Readiness
) -> tuple[OpsServer, Part]:
    """The listener and how it starts and stops; while it runs, every log record at WARNING
    or above counts in `bot_errors_total`."""
    from bot.ops.server import OpsServer  # aiohttp's server only with `HTTP_PORT`

    server = OpsServer(readiness, metrics)
    errors = metrics.error_counter()

    async def start() -> None:
        logging.getLogger().addHandler(errors)
        await server.start(settings.http_listen, settings.http_port or 0)

    async def stop() -> None:
        await server.stop()
        logging.getLogger().removeHandler(errors)

    return server, (start, stop)


def watch_queues(
    metrics: PrometheusMetrics,
    disk: DiskHealth,
    queue: IndexQueueStore,
    inbox: TelegramInbox | None,
    rag: RagServer,
    config: RuntimeConfigStore,
) -> None:
    """What the metrics read when scraped: queue depths, the RAG circuit, the disk."""
    metrics.watch("bot_index_queue_depth", "Documents waiting for LightRAG.", lambda: queue.depth)
    metrics.watch(
        "bot_index_queue_failed", "Documents LightRAG refused for good.", queue.failed_count
    )
    metrics.watch("bot_disk_failing", "1 while a store's writes are refused.", lambda: disk.failing)
    metrics.watch("bot_disk_unwritten", "Items kept in memory for a refusing disk.", disk.unwritten)
    if inbox is not None:
        metrics.watch("bot_telegram_inbox_depth", "Updates received, not handled.", inbox.depth)
    if isinstance(rag, LightRagAdapter):
        breaker = rag.breaker
        metrics.watch_state(
            "bot_rag_circuit",
            "LightRAG's circuit breaker: 1 for its state (off: rag.enabled is false).",
            ["off", *(state.value for state in CircuitState)],
            lambda: breaker.state.value if config.current().rag.enabled else "off",
        )
