"""`/start`: the greeting Telegram sends when someone opens the bot."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.i18n.catalogue import commands as texts


@dataclass
class StartCommand:
    """Greets and says, in three lines, what the bot does and what it keeps."""

    config: RuntimeConfigStore

    def register(self, registry: CommandRegistry) -> None:
        """Called by the composition root (`BotApp.build`) when the bot runs in Telegram."""
        registry.register(Command("start", texts.about_start.say(), self.start))

    async def start(self, call: CommandCall) -> str:
        config = self.config.current()
        remembers = config.memory.enabled or config.rag.enabled
        return texts.start_greeting(call.message.user_name or "", remembers)
