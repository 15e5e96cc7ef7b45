"""The LLM port on the `openai` SDK: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp alike.

Retries are ours (`OPENAI_RETRY`, the bot's one `RetryPolicy`), not the SDK's, so that a 429's
Retry-After is honoured exactly and the whole retry time is bounded. Every failure leaves as an
`LlmError` whose message a user can read; the exception types of `openai` never reach the
pipeline.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import aiohttp
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient
from tenacity import AsyncRetrying

from bot.adapters.openai_chat_http import ChatCompletionsHttp, ChatStream
from bot.conversation import ChatMessage, ToolCall
from bot.i18n.catalogue import notices
from bot.ports.health import Health, HealthState
from bot.ports.llm import (
    ImageInput,
    LlmError,
    LlmRequest,
    LlmResponse,
    TextListener,
    TokenUsage,
)
from bot.retry import RetryPolicy

log = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 2.5
"""A readiness look at the server (`health`); within the readiness check's own bound."""

_API_JSON = attrgetter("api_json")
STREAM_EVERY_DELTA_CHARS = 4096
"""Below this the stream listener hears of every delta (about one Telegram message)."""


class OpenAiLlm:
    """`LlmPort` over `AsyncOpenAI.chat.completions`, streaming when a listener is given."""

    def __init__(self, client: AsyncOpenAI) -> None:
        self._client = client
        self._chat = ChatCompletionsHttp(client)
        # OpenAI's reasoning models refuse `max_tokens`; switched once when the API says so.
        self._max_tokens_field = "max_tokens"
        # Models whose server refused a `json_schema` response format (many local servers only
        # know `json_object`); learnt from one 400 each, so later requests do not pay it again.
        self._json_object_only: set[str] = set()
        # Servers that refuse `stream_options` (usage in the last chunk); learnt from one 400.
        self._stream_usage = True

    @classmethod
    def connect(cls, api_key: str | None, base_url: str | None) -> OpenAiLlm:
        """A client for `base_url` (OpenAI when None); local servers accept any key."""
        client = AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=0,
            # The SDK's aiohttp transport: httpx2's pool checks every pooled connection on each
            # request, which costs milliseconds per turn once many chats run at once.
            http_client=DefaultAioHttpClient(),
        )
        return cls(client)

    async def close(self) -> None:
        await self._chat.close()
        await self._client.close()

    async def health(self) -> Health:
        """Readiness (`/readyz`): one `GET /models`, no retry. Any answer but a refused key
        or a server error means the server is there (some local servers have no model list)."""
        client = self._client.with_options(timeout=PROBE_TIMEOUT_SECONDS, max_retries=0)
        try:
            await client.models.list()
        except (openai.AuthenticationError, openai.PermissionDeniedError):
            return Health(HealthState.DOWN, "the server refuses the key (OPENAI_API_KEY)")
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                return Health(HealthState.DOWN, f"the server answers HTTP {exc.status_code}")
            return Health(HealthState.OK, f"reachable (HTTP {exc.status_code} for /models)")
        except openai.APITimeoutError:
            return Health(HealthState.DOWN, f"no answer within {PROBE_TIMEOUT_SECONDS:g}s")
        except openai.APIConnectionError:
            return Health(HealthState.DOWN, "the server cannot be reached")
        return Health(HealthState.OK, "reachable")

    async def complete(
        self, request: LlmRequest, on_text: TextListener | None = None
    ) -> LlmResponse:
        started = time.monotonic()
        attempts = 0

        async def attempt() -> LlmResponse:
            nonlocal attempts
            attempts += 1
            return await self._complete_once(request, on_text)

        policy = OPENAI_RETRY.limited(request.retry_attempts, request.retry_max_seconds)
        try:
            return await policy.call(attempt)
        except openai.OpenAIError as exc:
            raise _as_llm_error(exc, request, attempts, time.monotonic() - started) from exc

    async def _complete_once(
        self, request: LlmRequest, on_text: TextListener | None
    ) -> LlmResponse:
        while True:  # each fallback applies once, so this ends
            try:
                return await self._call(request, on_text)
            except openai.BadRequestError as exc:
                if not self._fall_back(exc, request):
                    raise

    def _fall_back(self, exc: openai.BadRequestError, request: LlmRequest) -> bool:
        """Adapt to a 400 naming a parameter this server does not take; False when none does."""
        said = str(exc)
        if self._stream_usage and "stream_options" in said:
            self._stream_usage = False
            log.warning("[LLM] the server refused stream_options; usage is estimated")
            return True
        if self._max_tokens_field == "max_tokens" and "max_completion_tokens" in said:
            self._max_tokens_field = "max_completion_tokens"
            return True
        if (
            request.response_schema is not None
            and "response_format" in said
            and request.model not in self._json_object_only
        ):
            self._json_object_only.add(request.model)
            log.warning("[LLM] %s refused a JSON schema; asking for a JSON object", request.model)
            return True
        return False

    async def _call(self, request: LlmRequest, on_text: TextListener | None) -> LlmResponse:
        # The body is JSON text we make (each message's JSON is made once and kept with it,
        # since every turn sends the whole history again), posted by `ChatCompletionsHttp`
        # and answered as parsed JSON: the SDK's typed `create` transforms every parameter
        # recursively and builds a pydantic model of every streamed chunk, and even its
        # untyped `post` cost about a millisecond of CPU a call, which together were most of
        # a turn's CPU under load (bench/telegram_concurrency.py).
        fields: dict[str, Any] = {
            "model": request.model,
            "temperature": request.temperature,
            self._max_tokens_field: request.max_output_tokens,
        }
        if request.response_schema is not None:
            fields["response_format"] = self._response_format(
                request.model, request.response_schema
            )
        if on_text is None or request.response_schema is not None:
            completion = await self._chat.complete(_body(fields, request), request.timeout_seconds)
            return _from_completion(completion, request.max_output_chars)
        fields["stream"] = True
        if self._stream_usage:
            fields["stream_options"] = {"include_usage": True}
        stream = await self._chat.stream(_body(fields, request), request.timeout_seconds)
        return await _collect_stream(stream, on_text, request.max_output_chars)

    def _response_format(self, model: str, schema: dict[str, Any]) -> dict[str, Any]:
        if model in self._json_object_only:
            return {"type": "json_object"}  # the prompt has to describe the shape then
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }


def _body(fields: dict[str, Any], request: LlmRequest) -> bytes:
    """The request's JSON: `fields`, then the tools and messages from the JSON each keeps;
    the request's images go into its last user message, as content parts."""
    messages = list(map(_API_JSON, request.messages))
    if request.images:
        users = [i for i, m in enumerate(request.messages) if m.role == "user"]
        if users:
            last = users[-1]
            messages[last] = json.dumps(_with_images(request.messages[last], request.images))
    parts = [json.dumps(fields)[1:-1], f'"messages": [{", ".join(messages)}]']
    if request.tools:
        parts.append(f'"tools": [{", ".join(spec.api_json for spec in request.tools)}]')
    return f"{{{', '.join(parts)}}}".encode()


def _with_images(message: ChatMessage, images: tuple[ImageInput, ...]) -> dict[str, Any]:
    """A user message as content parts: its text, then each image as a data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for image in images:
        encoded = base64.b64encode(image.data).decode("ascii")
        url = f"data:{image.mime_type};base64,{encoded}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {**message.api_fields(), "content": parts}


def _from_completion(completion: object, max_chars: int | None = None) -> LlmResponse:
    choices = _list(_dict(completion).get("choices"))
    if not choices:
        raise LlmError(notices.llm_empty())
    message = _dict(_dict(choices[0]).get("message"))
    calls = [
        ToolCall(
            id=_str(call.get("id")) or _new_call_id(),
            name=_str(function.get("name")),
            arguments=_str(function.get("arguments")) or "{}",
        )
        for call in map(_dict, _list(message.get("tool_calls")))
        if (function := call.get("function")) is not None and isinstance(function, dict)
    ]
    text = message.get("content") if isinstance(message.get("content"), str) else None
    size = len(text or "") + sum(len(call.arguments) for call in calls)
    usage = _usage(completion)
    if max_chars is not None and size > max_chars:
        _log_cut(max_chars)
        cut = text[:max_chars] if text else None
        return LlmResponse(cut, calls, truncated=True, usage=usage)
    return LlmResponse(text=text, tool_calls=calls, usage=usage)


def _usage(reply: object) -> TokenUsage | None:
    """The `usage` of a completion or of a stream's last chunk, when the server sent one."""
    usage = _dict(reply).get("usage")
    if not isinstance(usage, dict):
        return None
    return TokenUsage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


def _dict(value: object) -> dict[str, Any]:
    """A JSON object of the answer, or {} where the server sent something else."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class _CallParts:
    """One tool call as its deltas arrive; arguments kept as parts and joined once."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


async def _collect_stream(
    stream: ChatStream, on_text: TextListener, max_chars: int | None = None
) -> LlmResponse:
    """`_read_stream`, hanging up when reading ends early: the turn was stopped (cancelled)
    or a listener failed, so the server stops generating what nobody reads."""
    try:
        return await _read_stream(stream, on_text, max_chars)
    except BaseException:
        await _close(stream)
        raise


async def _read_stream(
    stream: ChatStream, on_text: TextListener, max_chars: int | None
) -> LlmResponse:
    """Assemble a streamed answer: text deltas go to `on_text`, tool-call deltas are joined.

    Deltas are kept as parts and joined only for the listener, which hears of every delta
    while the text is short and then each time it grew by a quarter: joining stays linear in
    the answer's length. Past `max_chars` the stream is closed and the response `truncated`.
    """
    parts: list[str] = []
    text_size = size = reported = 0
    slots: dict[int, _CallParts] = {}
    truncated = False
    usage = None
    async for chunk in stream:
        usage = _usage(chunk) or usage
        choices = _list(_dict(chunk).get("choices"))
        if not choices:
            continue
        delta = _dict(_dict(choices[0]).get("delta"))
        for part in map(_dict, _list(delta.get("tool_calls"))):
            slot = slots.setdefault(_int(part.get("index")), _CallParts())
            slot.id = _str(part.get("id")) or slot.id
            function = part.get("function")
            if isinstance(function, dict):
                slot.name = slot.name or _str(function.get("name"))
                arguments = _str(function.get("arguments"))
                slot.arguments.append(arguments)
                size += len(arguments)
        content = _str(delta.get("content"))
        if content:
            parts.append(content)
            text_size += len(content)
            size += len(content)
        if max_chars is not None and size > max_chars:
            truncated = True
            break
        if content and (text_size < STREAM_EVERY_DELTA_CHARS or text_size >= reported * 1.25):
            reported = text_size
            await on_text("".join(parts))
    text = "".join(parts)
    if truncated:
        _log_cut(max_chars)
        await _close(stream)
        text = text[:max_chars]
    elif text and reported != text_size:
        await on_text(text)
    calls = [
        ToolCall(id=s.id or _new_call_id(), name=s.name, arguments="".join(s.arguments) or "{}")
        for _, s in sorted(slots.items())
    ]
    return LlmResponse(text=text or None, tool_calls=calls, truncated=truncated, usage=usage)


async def _close(stream: ChatStream) -> None:
    """Hang up on an answer we stopped reading, so the server stops sending it."""
    try:
        await stream.close()
    except Exception as exc:
        log.debug("[LLM] closing a cut stream failed: %s", exc)


def _log_cut(max_chars: int | None) -> None:
    log.warning("[LLM] answer cut at %s characters (llm.maxOutputChars)", max_chars)


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _is_transient(exc: BaseException) -> bool:
    """Worth another attempt: rate limits, server errors, time-outs, dropped connections."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500 or exc.status_code == 408
    return isinstance(exc, openai.APIConnectionError)


def _unreachable(exc: BaseException) -> bool:
    """No connection could be made (refused, no route, bad host).

    The SDK's aiohttp transport reports a refused connection as a connect *time-out*; the
    cause it keeps tells the two apart.
    """
    link: BaseException | None = exc
    while link is not None:
        if isinstance(link, aiohttp.ClientConnectorError | ConnectionRefusedError):
            return True
        link = link.__cause__ or link.__context__
    return False


def brief_failure(exc: BaseException | None) -> str:
    """A short name for what went wrong in a call (`HTTP 429`, `timeout`, ...), for logs."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if exc is not None and _unreachable(exc):
        return "connection failed"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection failed"
    return type(exc).__name__


def _as_llm_error(
    exc: openai.OpenAIError, request: LlmRequest, attempts: int, elapsed: float
) -> LlmError:
    tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    detail = f"{brief_failure(exc)} {tries} in {elapsed:.1f}s: {exc}"
    log.error("[LLM] request failed: %s", detail)
    return LlmError(_user_message(exc, request, attempts), detail)


def _user_message(exc: openai.OpenAIError, request: LlmRequest, attempts: int) -> str:
    """What the user is told, in their language (`bot/i18n/`)."""
    tries = notices.llm_tries(attempts)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return notices.llm_credentials(exc.status_code)
    if isinstance(exc, openai.NotFoundError):
        return notices.llm_model_not_found(request.model)
    if isinstance(exc, openai.RateLimitError):
        return notices.llm_rate_limited(tries)
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return notices.llm_server_failing(exc.status_code, tries)
    if isinstance(exc, openai.APIStatusError):
        return notices.llm_refused(exc.status_code)
    if _unreachable(exc):
        return notices.llm_unreachable(tries)
    if isinstance(exc, openai.APITimeoutError):
        return notices.llm_timed_out(request.timeout_seconds, tries)
    if isinstance(exc, openai.APIConnectionError):
        return notices.llm_unreachable(tries)
    return notices.llm_unreadable()


OPENAI_RETRY = RetryPolicy(
    "[LLM]", _is_transient, first_wait_seconds=0.5, max_wait_seconds=20, describe=brief_failure
)
"""Every call to an OpenAI-compatible server (chat and embeddings): transient failures only
(429, 408, 5xx, no connection), Retry-After honoured, jittered exponential back-off otherwise."""


def openai_retrying(attempts: int, max_seconds: float) -> AsyncRetrying:
    """`OPENAI_RETRY` bounded in attempts and in total time, for one request."""
    return OPENAI_RETRY.limited(attempts, max_seconds).retrying()
