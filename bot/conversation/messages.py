"""Messages as the bot stores them and sends them to the LLM."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Lone UTF-16 surrogates (a client can send them) cannot be written as UTF-8, and control
# characters other than tab and newline only confuse the model and the logs.
_UNWRITABLE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# A cheap, dependency-free estimate: English averages about four characters per token.
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def utc_now() -> datetime:
    return datetime.now(UTC)


def clean_text(text: str) -> str:
    """`text` safe to store and send: lone surrogates become U+FFFD, control characters go."""
    return _CONTROL.sub("", _UNWRITABLE.sub("\ufffd", text)).replace("\r\n", "\n")


class ToolCall(BaseModel):
    """One function call the model asked for; `arguments` is the raw JSON text it produced."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(BaseModel):
    """One message of a conversation, in the shape of the OpenAI chat API.

    A message never changes once made (the model is frozen): every turn weighs, sends and
    saves the whole history again, so what is derived from a message (`tokens`, `api_message`,
    `stored_json`) is worked out once and kept with it. (`model_copy(update=...)` would keep
    them stale: make a new message instead.)
    """

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    at: datetime | None = None
    external_id: str | None = None
    """The channel's own id of a user's message (Telegram: chat and message id)."""
    user_id: str | None = None
    """Who wrote a user's message, so `/forget all` finds it in a group's session too."""

    @cached_property
    def tokens(self) -> int:
        """About how many tokens the message takes in a prompt."""
        chars = len(self.content or "")
        chars += sum(len(call.name) + len(call.arguments) for call in self.tool_calls)
        return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS

    @cached_property
    def stored_json(self) -> str:
        """The message as its session's file keeps it (`model_dump_json`)."""
        return self.model_dump_json()

    @cached_property
    def api_message(self) -> dict[str, Any]:
        """The message in the chat completions API's shape (what the LLM gets of it: no time,
        ids or author), made once and shared: read it, never change it."""
        return self.api_fields()

    def api_fields(self) -> dict[str, Any]:
        """The message as a JSON object in the chat completions API's shape (a new one)."""
        # Never null: llama-cpp-python's server refuses an assistant's tool-call message whose
        # content is null (HTTP 500), and every server takes "".
        data: dict[str, Any] = {"role": self.role, "content": self.content or ""}
        if self.tool_calls:
            data["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.role == "tool":
            data["tool_call_id"] = self.tool_call_id
        return data

    @classmethod
    def user(
        cls,
        text: str,
        at: datetime | None = None,
        external_id: str | None = None,
        user_id: str | None = None,
    ) -> ChatMessage:
        return cls(
            role="user", content=text, at=at or utc_now(), external_id=external_id, user_id=user_id
        )

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
class IncomingFile:
    """A file that came with a message (a photo, a document), already downloaded by the
    channel within its size limit. Only this turn sees the bytes: sessions and memory keep
    the message's text (which names the file) and what the bot made of it."""

    file_name: str
    mime_type: str | None
    data: bytes = field(repr=False)
    is_photo: bool = False
    """Sent as a photo (Telegram re-encodes those as JPEG), not as a file."""

    @property
    def label(self) -> str:
        """How the message's text names the file, before any caption: `[Photo]`,
        `[Document: lease.pdf]`. The channel writes it; the session keeps it."""
        if self.is_photo:
            return "[Photo]"
        return f"[Document: {' '.join(self.file_name.split())[:100] or 'document'}]"

    def caption_in(self, text: str) -> str:
        """What the sender wrote with the file: `text` without the label."""
        return text.removeprefix(self.label).strip()

    def senders_words(self, text: str) -> str:
        """`text` as far as the sender wrote it: a document's label carries its file name,
        which whoever made the file chose, so only the caption is theirs; a photo's label
        names nothing from outside."""
        return text if self.is_photo else self.caption_in(text)


@dataclass(frozen=True)
class IncomingMessage:
    """A text message from a person, already past the channel's access checks.

    The text is cleaned on creation (see `clean_text`), so no channel can hand the pipeline
    something that breaks a session file.
    """

    address: ChatAddress
    user_id: str
    text: str
    received_at: datetime = field(default_factory=utc_now)
    user_name: str | None = None
    external_id: str | None = None
    """The channel's own id of this message, when it has one: a redelivered message (after a
    crash) is recognised by it and not answered twice."""
    operator: bool = False
    """The channel vouches that the sender runs this bot (the terminal's local user, Telegram's
    `telegram.adminUsers`): `/status` shows them server details such as paths and hosts."""
    in_group: bool = False
    """The chat has other members: a Telegram group, supergroup or forum topic. Its memory is
    the group's, never the sender's private memory (`bot/conversation/scope.py`)."""
    guest: bool = False
    """The bot is a guest in the chat, summoned there without being a member (Telegram's
    guest mode): it may answer this one message, once, and can never write there later, so
    nothing may be set to arrive there (a reminder). Such a chat is a group (`in_group`)."""
    on_answered: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    """Told the reply's text the moment it is delivered, before the turn is saved: the channel
    notes it, so that a kill in between is recorded after a restart, not answered twice."""
    answered_before: str | None = None
    """The reply this message had already been given when a kill cut its turn short (as the
    channel noted it through `on_answered`): the turn is recorded, not run again."""
    file: IncomingFile | None = None
    """A photo or document sent with the text (`bot/pipeline/attachments.py` reads it)."""
    language_code: str | None = None
    """The language the sender's app is set to, as the channel says (Telegram's
    `language_code`, the terminal's `LANG`): the bot's own texts follow it (`bot/i18n/`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", clean_text(self.text))
