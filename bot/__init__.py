"""A Telegram assistant with long-term memory."""

__version__ = "0.1.0"
