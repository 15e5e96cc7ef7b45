"""Which model answers in a chat: the one chosen there with `/model`, else `llm.model`."""

from __future__ import annotations

from typing import Protocol

from bot.config.model import LlmConfig


class ChatModelChoice(Protocol):
    def model_for(self, chat_key: str, limits: LlmConfig) -> str:
        """The model for chat `chat_key`: its choice while `llm.models` allows it, else
        `limits.model`."""
        ...
