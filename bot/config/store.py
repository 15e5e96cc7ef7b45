"""Hot reload of the runtime config, always holding the last valid one.

`current()` costs one `stat()`: the file is read again only when its modification time, size
or inode changed (or changed so recently that the clock tick may hide a second edit), so an
edit takes effect on the next turn with no polling loop and no restart. A broken edit is
reported once, in one log line naming the file, the field and the problem, and the last valid
config stays in force. The bot never writes this file.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from pydantic import ValidationError

from bot.config.model import RuntimeConfig, unknown_keys

log = logging.getLogger(__name__)

_Signature = tuple[int, int, int]
# File systems stamp mtimes with a coarse clock (a few ms): two edits inside one tick look
# alike, so a file modified this recently is compared by content as well.
_RECENT_NS = 2_000_000_000


class ConfigError(ValueError):
    """The text is not a valid runtime config; the message names each field and problem."""


class RuntimeConfigStore:
    """Reads `preferences/runtime-config.json` on change; `current()` is safe to call every turn."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._config = RuntimeConfig()
        self._signature: _Signature | None = None
        self._raw: bytes | None = None
        self.last_error: str | None = None
        if self._stat() is None:
            log.info("[Config] %s not found; using defaults", self.path)
        else:
            self.current()

    def current(self) -> RuntimeConfig:
        """The last valid config, re-read first if the file changed since the last call."""
        signature = self._stat()
        if signature is None:
            if self._signature is not None:
                log.warning(
                    "[Config] %s disappeared; keeping the last valid config until it is back",
                    self.path,
                )
            self._signature = None
            return self._config
        recent = time.time_ns() - signature[0] < _RECENT_NS
        if signature != self._signature or recent:
            self._signature = signature
            self._reload_if_new()
        return self._config

    def _stat(self) -> _Signature | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _reload_if_new(self) -> None:
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            log.error("[Config] cannot read %s, keeping the last valid config: %s", self.path, exc)
            return
        if raw == self._raw:
            return
        self._raw = raw
        try:
            config = parse_runtime_config(raw.decode("utf-8"))
        except (UnicodeDecodeError, ConfigError) as exc:
            self.last_error = str(exc)
            log.error("[Config] %s rejected, keeping the last valid config: %s", self.path, exc)
            return
        for key in unknown_keys(config):
            log.warning("[Config] %s: unknown key '%s' is ignored", self.path, key)
        self._config = config
        self.last_error = None
        log.info("[Config] loaded %s", self.path)


def parse_runtime_config(text: str) -> RuntimeConfig:
    """Validate JSON text into a `RuntimeConfig`, or raise `ConfigError` with a one-line reason."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ConfigError(f"not valid JSON at {where}: {exc.msg}") from None
    except RecursionError:  # about 1,000 levels: no config is shaped like that
        raise ConfigError("not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a JSON object")
    try:
        return RuntimeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    except RecursionError:
        raise ConfigError("nested too deeply") from None


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(part) for part in error["loc"]) or "(top level)"
        value = error.get("input")
        secret = any(word in field.lower() for word in ("key", "token", "secret"))
        hidden = secret or isinstance(value, dict | list)
        shown = "" if hidden else f" (got {json.dumps(value)[:60]})"
        problems.append(f"{field}: {error['msg']}{shown}")
    return "; ".join(problems)
