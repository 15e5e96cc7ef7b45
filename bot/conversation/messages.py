"""Messages as the bot stores them and sends them to the LLM."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field


def utc_now() -> datetime:
    return datetime.now(UTC)


class ToolCall(BaseModel):
    """One function call the model asked for; `arguments` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(BaseModel):
    """One message of a conversation, in the shape of the OpenAI chat API."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    at: datetime | None = None

    @classmethod
    def user(cls, text: str, at: datetime | None = None) -> ChatMessage:
        return cls(role="user", content=text, at=at or utc_now())

    @classmethod
    def assistant(cls, text: str | None, tool_calls: list[ToolCall] | None = None) -> ChatMessage:
        return cls(role="assistant", content=text, tool_calls=tool_calls or [], at=utc_now())

    @classmethod
    def tool_result(cls, call_id: str, text: str) -> ChatMessage:
        return cls(role="tool", content=text, tool_call_id=call_id)


@dataclass(frozen=True)
class ChatAddress:
    """Where a message came from and where its reply goes. One session per address."""

    channel: str
    chat_id: str
    thread_id: str | None = None

    @property
    def session_key(self) -> str:
        key = f"{self.channel}:{self.chat_id}"
        return f"{key}:{self.thread_id}" if self.thread_id else key


@dataclass(frozen=True)
class IncomingMessage:
    """A text message from a person, already past the channel's access checks."""

    address: ChatAddress
    user_id: str
    text: str
    received_at: datetime = field(default_factory=utc_now)
    user_name: str | None = None
