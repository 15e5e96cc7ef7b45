"""Reading a chat completion's answer into an `LlmResponse`, streamed or not, bounded.

The bytes come from the `openai` SDK's public streaming response
(`chat.completions.with_streaming_response.create`); this module reads them itself so that no
server can make the bot hold more than `MAX_ANSWER_BYTES` (the SDK reads a whole body, or a
whole event, however large), and so that a stream's chunks are read as plain JSON instead of a
pydantic model each. What a server sends that is no answer at all (an empty 200, an error
event mid-stream, an HTML page) becomes an `UnusableAnswer` that names it.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from bot.conversation import ToolCall
from bot.ports.llm import LlmResponse, TextListener, TokenUsage

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""A whole answer, or one streamed event, past this is refused with a clear error: a chat
answer is a few kilobytes, and no server may make the bot hold more than this."""
STREAM_EVERY_DELTA_CHARS = 4096
"""Below this the stream listener hears of every delta (about one Telegram message)."""
SHOWN_CHARS = 200
"""How much of what a server sent a log line quotes."""


class UnusableAnswer(Exception):
    """The server answered with something that is no answer; the message says what it sent."""


class AnswerTooLarge(UnusableAnswer):
    """More than `MAX_ANSWER_BYTES` in one answer or one event."""


class NoAnswer(UnusableAnswer):
    """No text, no tool call and no finish reason: an empty 200, or a stream cut short."""


class StreamErrorEvent(UnusableAnswer):
    """The server sent `data: {"error": ...}` instead of the rest of the stream."""


def quoted(sent: bytes | str) -> str:
    """What a server sent, on one line and short: enough to tell an HTML page from JSON."""
    text = sent.decode("utf-8", "replace") if isinstance(sent, bytes) else sent
    text = re.sub(r"\s+", " ", text).strip()
    return repr(text[:SHOWN_CHARS] + ("…" if len(text) > SHOWN_CHARS else ""))


class SseEvents:
    """Server-sent events' data out of the bytes as they arrive: each event's `data:` lines
    joined; comments (`: ping`) and other fields ignored, as the SDK ignores them.

    Linear in the body's length even when a server sends megabytes without a newline: bytes
    with no line end wait as parts and are joined once, when their line ends.
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._data: list[str] = []
        self._data_size = 0

    @property
    def buffered(self) -> int:
        """Bytes of the event not yet complete, which a server could otherwise grow forever."""
        return self._pending_size + self._data_size

    def feed(self, chunk: bytes) -> list[str]:
        if b"\n" not in chunk:
            self._pending.append(chunk)
            self._pending_size += len(chunk)
            return []
        self._pending.append(chunk)
        lines = b"".join(self._pending).split(b"\n")
        tail = lines.pop()
        self._pending = [tail]
        self._pending_size = len(tail)
        events: list[str] = []
        for line in lines:
            self._line(line.rstrip(b"\r"), events)
        return events

    def end(self) -> list[str]:
        """What is left when the body ends without a blank line after its last event."""
        events: list[str] = []
        self._line(b"".join(self._pending).rstrip(b"\r"), events)
        self._pending, self._pending_size = [], 0
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[str]) -> None:
        if not line:
            if self._data:
                events.append("\n".join(self._data))
                self._data = []
                self._data_size = 0
        elif line.startswith(b"data:"):
            self._data.append(line[5:].removeprefix(b" ").decode("utf-8", "replace"))
            self._data_size += len(line)


async def read_bounded(body: AsyncIterator[bytes]) -> bytes:
    """A whole body, refused past `MAX_ANSWER_BYTES`."""
    parts: list[bytes] = []
    size = 0
    async for chunk in body:
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise too_large()
        parts.append(chunk)
    return b"".join(parts)


def too_large() -> AnswerTooLarge:
    return AnswerTooLarge(f"the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MB")


async def stream_events(body: AsyncIterator[bytes]) -> AsyncIterator[dict[str, Any]]:
    """The chunks of a streamed answer as parsed JSON, up to `[DONE]` or the body's end."""
    events = SseEvents()
    async for chunk in body:
        for data in events.feed(chunk):
            if data.startswith("[DONE]"):
                await read_bounded(body)  # to the end, so the connection goes back to the pool
                return
            yield _chunk(data)
        if events.buffered > MAX_ANSWER_BYTES:
            raise too_large()
    for data in events.end():
        if not data.startswith("[DONE]"):
            yield _chunk(data)


def _chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise UnusableAnswer(f"a streamed event that is not JSON: {quoted(data)}") from None
    if isinstance(chunk, dict) and chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise StreamErrorEvent(f"an error event mid-stream: {quoted(str(message))}")
    return _dict(chunk)


def from_completion(content: bytes, max_chars: int | None = None) -> LlmResponse:
    """A whole (not streamed) answer's JSON as a response."""
    try:
        completion = json.loads(content)
    except ValueError:
        raise UnusableAnswer(f"an answer that is not JSON: {quoted(content)}") from None
    choices = _list(_dict(completion).get("choices"))
    if not choices:
        raise NoAnswer(f"an answer without choices: {quoted(content)}")
    choice = _dict(choices[0])
    message = _dict(choice.get("message"))
    calls = [
        ToolCall(
            id=_str(call.get("id")) or _new_call_id(),
            name=_str(function.get("name")),
            arguments=_str(function.get("arguments")) or "{}",
        )
        for call in map(_dict, _list(message.get("tool_calls")))
        if isinstance(function := call.get("function"), dict)
    ]
    text = _str(message.get("content")) or None
    finish = _str(choice.get("finish_reason")) or None
    size = len(text or "") + sum(len(call.arguments) for call in calls)
    usage = read_usage(completion)
    if max_chars is not None and size > max_chars:
        log_cut(max_chars)
        cut = text[:max_chars] if text else None
        return LlmResponse(cut, calls, truncated=True, usage=usage, finish_reason=finish)
    response = LlmResponse(text, calls, usage=usage, finish_reason=finish)
    return _checked(response, f"an answer with no content: {quoted(content)}")


def _checked(response: LlmResponse, what: str) -> LlmResponse:
    """`response`, unless it holds nothing at all: no text, no tool call, and no finish
    reason that would explain it (`length`: the token limit cut it before any text)."""
    if response.text or response.tool_calls or response.finish_reason == "length":
        return response
    raise NoAnswer(what)


def read_usage(reply: object) -> TokenUsage | None:
    """The `usage` of a completion or of a stream's last chunk, when the server sent one,
    with the prompt tokens served from cache and the completion tokens spent reasoning."""
    usage = _dict(reply).get("usage")
    if not isinstance(usage, dict):
        return None
    prompt_details = _dict(usage.get("prompt_tokens_details"))
    completion_details = _dict(usage.get("completion_tokens_details"))
    return TokenUsage(
        _int(usage.get("prompt_tokens")),
        _int(usage.get("completion_tokens")),
        cached_tokens=_int(prompt_details.get("cached_tokens")),
        reasoning_tokens=_int(completion_details.get("reasoning_tokens")),
    )


@dataclass
class _CallParts:
    """One tool call as its deltas arrive; arguments kept as parts and joined once."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Streamed:
    """What a stream brought so far."""

    parts: list[str] = field(default_factory=list)
    text_size: int = 0
    size: int = 0
    reported: int = 0
    slots: dict[int, _CallParts] = field(default_factory=dict)
    reasoning: int = 0
    finish: str | None = None
    usage: TokenUsage | None = None
    events: int = 0


async def read_stream(
    chunks: AsyncIterator[dict[str, Any]], on_text: TextListener, max_chars: int | None
) -> LlmResponse:
    """Assemble a streamed answer: text deltas go to `on_text`, tool-call deltas are joined,
    reasoning deltas are counted and never shown.

    Deltas are kept as parts and joined only for the listener, which hears of every delta
    while the text is short and then each time it grew by a quarter: joining stays linear in
    the answer's length. Past `max_chars` reading stops and the response is `truncated`.
    """
    got = _Streamed()
    truncated = False
    async for chunk in chunks:
        got.events += 1
        got.usage = read_usage(chunk) or got.usage
        content = _take_delta(got, chunk)
        if max_chars is not None and got.size > max_chars:
            truncated = True
            break
        if content and _worth_showing(got):
            got.reported = got.text_size
            await on_text("".join(got.parts))
    text = "".join(got.parts)
    if truncated:
        log_cut(max_chars)
        text = text[:max_chars] if max_chars is not None else text
    elif text and got.reported != got.text_size:
        await on_text(text)
    calls = [
        ToolCall(id=s.id or _new_call_id(), name=s.name, arguments="".join(s.arguments) or "{}")
        for _, s in sorted(got.slots.items())
    ]
    response = LlmResponse(
        text or None, calls, truncated=truncated, usage=got.usage, finish_reason=got.finish
    )
    if truncated:
        return response
    if not (text or calls or got.finish):
        raise NoAnswer(
            f"a stream of {got.events} events ({got.reasoning} characters of reasoning) "
            "with no content, no tool call and no finish reason"
        )
    return _checked(response, f"a stream ending {got.finish!r} with no content")


def _worth_showing(got: _Streamed) -> bool:
    return got.text_size < STREAM_EVERY_DELTA_CHARS or got.text_size >= got.reported * 1.25


def _take_delta(got: _Streamed, chunk: dict[str, Any]) -> str:
    """One chunk's delta into `got`; returns its text."""
    choices = _list(chunk.get("choices"))
    if not choices:
        return ""
    choice = _dict(choices[0])
    got.finish = _str(choice.get("finish_reason")) or got.finish
    delta = _dict(choice.get("delta"))
    for part in map(_dict, _list(delta.get("tool_calls"))):
        slot = got.slots.setdefault(_int(part.get("index")), _CallParts())
        slot.id = _str(part.get("id")) or slot.id
        function = part.get("function")
        if isinstance(function, dict):
            slot.name = slot.name or _str(function.get("name"))
            arguments = _str(function.get("arguments"))
            slot.arguments.append(arguments)
            got.size += len(arguments)
    got.reasoning += len(_str(delta.get("reasoning")) or _str(delta.get("reasoning_content")))
    content = _str(delta.get("content"))
    if content:
        got.parts.append(content)
        got.text_size += len(content)
        got.size += len(content)
    return content


def log_cut(max_chars: int | None) -> None:
    log.warning("[LLM] answer cut at %s characters (llm.maxOutputChars)", max_chars)


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _dict(value: object) -> dict[str, Any]:
    """A JSON object of the answer, or {} where the server sent something else."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
