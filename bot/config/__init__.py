"""Runtime config: the typed model and the hot-reloading store."""

from bot.config.model import RuntimeConfig
from bot.config.store import ConfigError, RuntimeConfigStore, parse_runtime_config

__all__ = ["ConfigError", "RuntimeConfig", "RuntimeConfigStore", "parse_runtime_config"]
