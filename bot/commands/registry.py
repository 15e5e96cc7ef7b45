"""Slash commands that work the same in every channel."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.conversation import IncomingMessage
from bot.i18n import Language, Say, current_language
from bot.i18n.catalogue import commands as texts

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
    description: Say | str
    """For the menu and `/help`: a `Say` from the catalogue (`bot/i18n/`); a plain `str` is
    shown as it is in every language (not yet translated)."""
    handler: CommandHandler
    private_in_groups: bool = False
    """Its reply is for the asker's eyes only (their memory, their reminders): in a group it
    goes to them in private (`bot/commands/private_answers.py`)."""

    def description_in(self, language: Language) -> str:
        return (
            self.description.in_(language)
            if isinstance(self.description, Say)
            else self.description
        )


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

    def remove(self, name: str) -> None:
        """Take a command out where its channel cannot honour it (the terminal has no `/stop`:
        nothing can be typed while an answer is written)."""
        self._commands.pop(name, None)

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def answers_privately(self, call: CommandCall) -> bool:
        """Whether `call`'s reply must reach only the member who asked (a group's command whose
        reply is theirs alone)."""
        command = self._commands.get(call.name)
        return call.message.in_group and command is not None and command.private_in_groups

    def menu(self) -> list[Command]:
        return list(self._commands.values())

    async def run(self, call: CommandCall) -> str:
        """The command's reply; when it fails (a store that cannot be reached), one log line
        and a reply that says so, naming no server detail."""
        command = self._commands.get(call.name)
        if command is None:
            return texts.unknown_command(call.name)
        try:
            return await command.handler(call)
        except Exception as exc:
            log.error("[Commands] /%s failed: %s", call.name, str(exc) or type(exc).__name__)
            return texts.command_failed(call.name)

    def help_text(self) -> str:
        """The menu in the current language (`bot/i18n/`)."""
        language = current_language()
        lines = [f"/{c.name} — {c.description_in(language)}" for c in self.menu()]
        return texts.help_text("\n".join(lines))
