"""The composition root: the one place that knows every concrete class and wires them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.adapters.openai_llm import OpenAiLlm
from bot.commands import CommandRegistry, CoreCommands
from bot.config import RuntimeConfigStore
from bot.conversation import IncomingMessage
from bot.pipeline import Pipeline
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.channel import ChannelPort
from bot.ports.llm import LlmPort
from bot.prompts import PromptFiles
from bot.settings import Settings
from bot.storage.sessions import JsonSessionStore
from bot.tools import ToolRegistry, builtin_tools
from bot.turns import TurnRunner

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot, TelegramOptions

log = logging.getLogger(__name__)


@dataclass
class BotApp:
    """A built bot: hand it messages from any channel with `handle`."""

    settings: Settings
    config: RuntimeConfigStore
    commands: CommandRegistry
    tools: ToolRegistry
    sessions: JsonSessionStore
    pipeline: Pipeline
    runner: TurnRunner
    llm: LlmPort

    @classmethod
    def build(cls, settings: Settings, llm: LlmPort | None = None) -> BotApp:
        """Wire the bot from settings; `llm` replaces the OpenAI adapter (tests, benchmarks)."""
        config = RuntimeConfigStore(settings.runtime_config_path)
        if llm is None:
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
            llm = OpenAiLlm.connect(key, settings.openai_base_url)
        tools = ToolRegistry(builtin_tools())
        sessions = JsonSessionStore(settings.data_dir / "sessions")
        prompts = PromptFiles(settings.prompts_dir)

        pipeline = Pipeline(
            [
                ContextBuildingSystem(prompts, tools),
                ToolLoopSystem(llm, tools),
                ResponseRoutingSystem(),
            ]
        )
        commands = CommandRegistry()
        CoreCommands(
            registry=commands,
            sessions=sessions,
            config=config,
            tools=tools,
            llm_endpoint=describe_endpoint(settings.openai_base_url),
        ).register()
        runner = TurnRunner(pipeline, sessions, config, commands)
        return cls(settings, config, commands, tools, sessions, pipeline, runner, llm)

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        await self.runner.handle(message, channel)

    def telegram_bot(self, options: TelegramOptions) -> TelegramBot:
        """The Telegram channel driving this app (PTB is imported only when it is used)."""
        from bot.adapters.telegram import TelegramBot

        return TelegramBot(self.handle, self.config, self.commands, options)

    async def aclose(self) -> None:
        close = getattr(self.llm, "close", None)
        if close is not None:
            await close()


def describe_endpoint(base_url: str | None) -> str:
    """Host and port of the LLM API for `/status`: never a path, query or credentials."""
    if not base_url:
        return "api.openai.com"
    parts = urlsplit(base_url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
