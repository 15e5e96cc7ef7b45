"""The Telegram channel: python-telegram-bot wired to the core (see docs/TELEGRAM.md)."""

from bot.adapters.telegram.application import StartupFailed, TelegramBot
from bot.adapters.telegram.options import TelegramOptions, WebhookOptions

__all__ = ["StartupFailed", "TelegramBot", "TelegramOptions", "WebhookOptions"]
