"""The terminal chat: `TerminalChannel` reads lines and shows replies on a `Screen`."""

from bot.adapters.terminal.channel import (
    QUIT_WORDS,
    TERMINAL_ADDRESS,
    TERMINAL_USER,
    TerminalChannel,
    locale_language,
)

__all__ = ["QUIT_WORDS", "TERMINAL_ADDRESS", "TERMINAL_USER", "TerminalChannel", "locale_language"]
