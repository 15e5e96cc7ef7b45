"""`/start`: the greeting Telegram sends when someone opens the bot."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore


@dataclass
class StartCommand:
    """Greets and says, in three lines, what the bot does and what it keeps."""

    config: RuntimeConfigStore

    def register(self, registry: CommandRegistry) -> None:
        """Called by the composition root (`BotApp.build`) when the bot runs in Telegram."""
        registry.register(Command("start", "what I do and what I remember", self.start))

    async def start(self, call: CommandCall) -> str:
        config = self.config.current()
        name = call.message.user_name
        remembers = config.memory.enabled or config.rag.enabled
        memory = (
            "I keep our conversation, so follow-up questions work, and I remember what you "
            "tell me across conversations."
            if remembers
            else "I keep our conversation, so follow-up questions work."
        )
        return (
            f"Hi{f' {name}' if name else ''}! I'm your assistant: ask me anything, "
            "and I can use tools such as a calculator and the clock.\n"
            f"{memory}\n"
            "/new starts a fresh conversation, /help lists the commands."
        )
