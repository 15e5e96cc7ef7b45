"""Slash commands: the registry, and the commands every channel has."""

from bot.commands.core import CoreCommands
from bot.commands.registry import (
    Command,
    CommandCall,
    CommandRegistry,
    is_command,
    parse_command,
)

__all__ = [
    "Command",
    "CommandCall",
    "CommandRegistry",
    "CoreCommands",
    "is_command",
    "parse_command",
]
