"""`/model`: the model each chat chose from `llm.models`, kept on disk.

One small JSON file, `<data dir>/chat-models.json`, by session key, read once at start and
rewritten atomically on each change. A choice the allow-list no longer holds is ignored (the
chat gets `llm.model` again) but kept, so it returns if the operator lists the model again.
A damaged file is logged and every chat gets `llm.model` until a choice is made
(`bot/storage/choices.py`).
"""

from __future__ import annotations

from pathlib import Path

from bot.config.model import LlmConfig
from bot.storage.choices import ChoiceStore, KeyedChoices


class ChatModels:
    """Per-chat model choice; implements the `ChatModelChoice` port."""

    def __init__(self, path: Path | None, store: ChoiceStore[str] | None = None) -> None:
        """`store`: where the choices live instead of `path` (PostgreSQL)."""
        self.path = path
        self._choices = store or KeyedChoices(path, "models", str, "[Models] /model")

    def chosen(self, chat_key: str) -> str | None:
        return self._choices.get(chat_key)

    def model_for(self, chat_key: str, limits: LlmConfig) -> str:
        chosen = self._choices.get(chat_key)
        return chosen if chosen is not None and chosen in limits.models else limits.model

    async def choose(self, chat_key: str, model: str | None) -> bool:
        """Record `model` for the chat (None: back to `llm.model`); False when the disk
        refused it (then nothing changes: a choice that would not survive a restart)."""
        return await self._choices.choose(chat_key, model)
