"""`/model`: the model each chat chose from `llm.models`, kept on disk.

One small JSON file, `<data dir>/chat-models.json`, by session key, read once at start and
rewritten atomically on each change. A choice the allow-list no longer holds is ignored (the
chat gets `llm.model` again) but kept, so it returns if the operator lists the model again.
A damaged file is logged and every chat gets `llm.model` until a choice is made.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from pydantic import BaseModel, ValidationError

from bot.config.model import LlmConfig
from bot.storage.atomic import write_atomic

log = logging.getLogger(__name__)


class _Choices(BaseModel):
    models: dict[str, str] = {}


class ChatModels:
    """Per-chat model choice; implements the `ChatModelChoice` port."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._chosen: dict[str, str] = self._read()
        self._lock = asyncio.Lock()

    def chosen(self, chat_key: str) -> str | None:
        return self._chosen.get(chat_key)

    def model_for(self, chat_key: str, limits: LlmConfig) -> str:
        chosen = self._chosen.get(chat_key)
        return chosen if chosen is not None and chosen in limits.models else limits.model

    async def choose(self, chat_key: str, model: str | None) -> bool:
        """Record `model` for the chat (None: back to `llm.model`); False when the disk
        refused it (then nothing changes: a choice that would not survive a restart)."""
        async with self._lock:
            chosen = dict(self._chosen)
            if model is None:
                chosen.pop(chat_key, None)
            else:
                chosen[chat_key] = model
            data = _Choices(models=chosen).model_dump_json(indent=1).encode()
            try:
                await asyncio.to_thread(write_atomic, self.path, data)
            except OSError as exc:
                log.error("[Models] could not record a /model choice: %s", exc)
                return False
            self._chosen = chosen
            return True

    def _read(self) -> dict[str, str]:
        try:
            return _Choices.model_validate_json(self.path.read_bytes()).models
        except FileNotFoundError:
            return {}
        except (OSError, ValidationError) as exc:
            log.error(
                "[Models] %s is unreadable (%s): every chat uses llm.model until a choice",
                self.path,
                str(exc).splitlines()[0],
            )
            return {}
