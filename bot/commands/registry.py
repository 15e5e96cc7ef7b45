"""Slash commands that work the same in every channel."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.conversation import IncomingMessage

log = logging.getLogger(__name__)

_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]+))?(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True)
class CommandCall:
    """A parsed command: `/forget@MyBot 42` is name `forget`, bot `MyBot`, args `42`."""

    name: str
    args: str
    bot_username: str | None
    message: IncomingMessage


CommandHandler = Callable[[CommandCall], Awaitable[str]]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: CommandHandler


def is_command(text: str) -> bool:
    """Whether `text` is a command (what `parse_command` would parse)."""
    return _COMMAND.match(text.strip()) is not None


def parse_command(message: IncomingMessage) -> CommandCall | None:
    """The command at the start of the message, or None when it is ordinary text."""
    match = _COMMAND.match(message.text.strip())
    if match is None:
        return None
    name, bot, args = match.groups()
    return CommandCall(name.lower(), (args or "").strip(), bot, message)


class CommandRegistry:
    """Named commands; later features register theirs (`/memory`, `/forget`, `/start`)."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}

    def register(self, command: Command) -> None:
        if command.name in self._commands:
            raise ValueError(f"command /{command.name} is already registered")
        self._commands[command.name] = command

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def menu(self) -> list[Command]:
        return list(self._commands.values())

    async def run(self, call: CommandCall) -> str:
        """The command's reply; when it fails (a store that cannot be reached), one log line
        and a reply that says so, naming no server detail."""
        command = self._commands.get(call.name)
        if command is None:
            return f"Unknown command /{call.name}. Send /help to see what I can do."
        try:
            return await command.handler(call)
        except Exception as exc:
            log.error("[Commands] /%s failed: %s", call.name, str(exc) or type(exc).__name__)
            return f"Sorry, /{call.name} failed this time. Please try again in a minute."

    def help_text(self) -> str:
        lines = [f"/{c.name} — {c.description}" for c in self.menu()]
        return "Commands:\n" + "\n".join(lines) + "\n\nAnything else you write is a message to me."
