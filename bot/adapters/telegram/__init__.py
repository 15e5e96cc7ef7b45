"""The Telegram channel: python-telegram-bot wired to the core (see docs/TELEGRAM.md)."""

from bot.adapters.telegram.application import StartupFailed, TelegramBot
from bot.adapters.telegram.commands import StartCommand
from bot.adapters.telegram.inbox import UpdateInbox, from_allowed_users
from bot.adapters.telegram.options import TelegramOptions, WebhookOptions

__all__ = [
    "StartCommand",
    "StartupFailed",
    "TelegramBot",
    "TelegramOptions",
    "UpdateInbox",
    "WebhookOptions",
    "from_allowed_users",
]
