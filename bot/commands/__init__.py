"""Slash commands: the registry, and the commands every channel has."""

from bot.commands.core import CoreCommands
from bot.commands.registry import Command, CommandCall, CommandRegistry, parse_command

__all__ = ["Command", "CommandCall", "CommandRegistry", "CoreCommands", "parse_command"]
