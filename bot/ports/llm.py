"""The LLM as the pipeline sees it: one request in, text or tool calls out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from bot.conversation import ChatMessage, ToolCall

TextListener = Callable[[str], Awaitable[None]]
"""Called while an answer streams in, with all of the answer's text so far: on every delta
while it is short, then each time it grew by a quarter (so the calls cost linear time)."""


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call, in JSON-schema terms."""

    name: str
    description: str
    parameters: dict[str, Any]

    @cached_property
    def api_dict(self) -> dict[str, Any]:
        """The tool in the chat completions API's shape: made once, since a spec never
        changes and goes with every request (read it, never change it)."""
        function = {"name": self.name, "description": self.description}
        parameters = without_length_bounds(self.parameters)
        return {"type": "function", "function": {**function, "parameters": parameters}}


LENGTH_BOUNDS = frozenset({"minLength", "maxLength"})


def without_length_bounds(schema: Any, in_properties: bool = False) -> Any:
    """`schema` without string length bounds, which the model need not see: every tool
    checks its own arguments (built-ins with pydantic, MCP servers themselves), and
    llama.cpp's server turns `maxLength: 500` into 500 nested grammar rules and refuses
    the whole request with a bare HTTP 500. A property that is *named* like a bound stays."""
    if isinstance(schema, dict):
        return {
            key: without_length_bounds(value, key == "properties")
            for key, value in schema.items()
            if in_properties or key not in LENGTH_BOUNDS
        }
    if isinstance(schema, list):
        return [without_length_bounds(value) for value in schema]
    return schema


@dataclass(frozen=True)
class ImageInput:
    """An image for the model to look at, in this request only: it goes with the last user
    message, and no `ChatMessage` holds it, so no session stores it or resends it."""

    data: bytes = field(repr=False)
    mime_type: str


@dataclass(frozen=True)
class LlmRequest:
    """One chat completion, with the limits the adapter must honour."""

    messages: list[ChatMessage]
    model: str
    temperature: float
    max_output_tokens: int
    timeout_seconds: float
    tools: list[ToolSpec] = field(default_factory=list)
    retry_attempts: int = 1
    retry_max_seconds: float = 0
    max_output_chars: int | None = None
    """The answer's text and tool-call arguments together stop growing past this; the adapter
    stops reading there and marks the response `truncated`. None: no limit."""
    response_schema: dict[str, Any] | None = None
    """A JSON schema the answer's text must follow (structured output), its `title` naming it
    to the API. Such a request is never streamed: half a JSON object is of no use to anyone."""
    images: tuple[ImageInput, ...] = ()
    """Images sent with the last user message of `messages` (`llm.vision`)."""
    billed_to: str | None = None
    """Whose daily usage this call counts against (a user id, or a group's memory scope for
    its memory extraction); None: nobody's (`bot/usage/`)."""


@dataclass(frozen=True)
class TokenUsage:
    """Tokens one call used, as the server counted them (or estimated when it did not say)."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    """Of the prompt tokens, those the server served from its cache (often billed less)."""
    reasoning_tokens: int = 0
    """Of the completion tokens, those a reasoning model spent thinking (never shown)."""
    cut: bool = False
    """The answer stopped at the model's output token limit (`finish_reason: length`), which
    `/usage` counts so a user (or operator) sees when `llm.maxOutputTokens` is too small."""

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class LlmResponse:
    """The model's answer: final text, or tool calls to run first."""

    text: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    truncated: bool = False
    """Cut at `LlmRequest.max_output_chars`: the text ends there, tool calls may be broken."""
    usage: TokenUsage | None = None
    """What the call cost, when the server said (`stream_options.include_usage` when streamed)."""
    finish_reason: str | None = None
    """Why the model stopped, as the server said: `stop`, `tool_calls`, `length` (its token
    limit, `llm.maxOutputTokens`, cut the answer)..."""

    @property
    def cut_by_token_limit(self) -> bool:
        return self.finish_reason == "length"


class LlmError(Exception):
    """The LLM gave no answer, retries included. `user_message` is safe to show the user."""

    def __init__(self, user_message: str, detail: str = "") -> None:
        super().__init__(detail or user_message)
        self.user_message = user_message


class ContextOverflow(LlmError):
    """The prompt does not fit the model's context window (the server said so)."""


class EmptyAnswer(LlmError):
    """The server answered with nothing: no text, no tool call, no finish reason (llama.cpp's
    server does so inside a stream when the prompt overflows its context)."""


class LlmPort(Protocol):
    async def complete(
        self, request: LlmRequest, on_text: TextListener | None = None
    ) -> LlmResponse:
        """Answer `request`; stream text to `on_text` when given. Raises `LlmError`."""
        ...
