"""The LLM port on the `openai` SDK: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp alike.

Retries are ours (`OPENAI_RETRY`, the bot's one `RetryPolicy`), not the SDK's, so that a 429's
Retry-After is honoured exactly and the whole retry time is bounded. Every failure leaves as an
`LlmError` whose message a user can read; the exception types of `openai` never reach the
pipeline.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient
from tenacity import AsyncRetrying

from bot.adapters.openai_answers import (
    NoAnswer,
    UnusableAnswer,
    from_completion,
    quoted,
    read_bounded,
    read_stream,
    stream_events,
)
from bot.conversation import ChatMessage
from bot.i18n.catalogue import notices
from bot.ports.health import Health, HealthState
from bot.ports.llm import (
    ContextOverflow,
    EmptyAnswer,
    ImageInput,
    LlmError,
    LlmRequest,
    LlmResponse,
    TextListener,
)
from bot.retry import RetryPolicy

log = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 2.5
"""A readiness look at the server (`health`); within the readiness check's own bound."""

RESPONSE_FORMATS = ("json_schema", "json_object", "none")
"""Structured output, from the strictest a server may take down to none (the prompt then
describes the shape, and the caller validates the answer)."""
SCHEMA_REFUSALS = (400, 422, 500)
"""Statuses servers refuse a `response_format` with: OpenAI 400, vLLM 422, llama-cpp-python's
server 500 (its pydantic model only knows `text` and `json_object`)."""
_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed_context_size|context (?:length|window|size)"
    r"|maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)


class OpenAiLlm:
    """`LlmPort` over `AsyncOpenAI.chat.completions`, streaming when a listener is given.

    Requests go through the SDK's public `with_streaming_response.create`, whose body this
    adapter reads itself (`openai_answers.py`), bounded. What it learns of a server's limits
    (a parameter refused, a response format it lacks) it remembers, so each is paid once.
    """

    def __init__(self, client: AsyncOpenAI) -> None:
        self._client = client
        # OpenAI's reasoning models refuse `max_tokens`; switched once when the API says so.
        self._max_tokens_field = "max_tokens"
        # How far down `RESPONSE_FORMATS` each model's server had to go (absent: 0).
        self._format_level: dict[str, int] = {}
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
        except UnusableAnswer as exc:
            raise _unusable(exc, request) from exc

    async def _complete_once(
        self, request: LlmRequest, on_text: TextListener | None
    ) -> LlmResponse:
        while True:  # each fallback applies once, so this ends
            try:
                return await self._call(request, on_text)
            except openai.APIStatusError as exc:
                if exc.status_code in (400, 413) and _OVERFLOW.search(str(exc)):
                    log.warning("[LLM] %s: the prompt is too long: %s", request.model, _said(exc))
                    raise ContextOverflow(notices.llm_context_overflow(), str(exc)) from exc
                if not self._fall_back(exc, request):
                    raise

    def _fall_back(self, exc: openai.APIStatusError, request: LlmRequest) -> bool:
        """Adapt to a refusal naming a parameter this server does not take; False when none
        does."""
        said = str(exc)
        if self._stream_usage and "stream_options" in said:
            self._stream_usage = False
            log.warning("[LLM] the server refused stream_options; usage is estimated")
            return True
        if self._max_tokens_field == "max_tokens" and "max_completion_tokens" in said:
            self._max_tokens_field = "max_completion_tokens"
            return True
        level = self._format_level.get(request.model, 0)
        if (
            request.response_schema is not None
            and exc.status_code in SCHEMA_REFUSALS
            and "response_format" in said
            and level < len(RESPONSE_FORMATS) - 1
        ):
            self._format_level[request.model] = level + 1
            log.warning(
                "[LLM] %s refused response_format %s (HTTP %d); asking for %s",
                request.model,
                RESPONSE_FORMATS[level],
                exc.status_code,
                RESPONSE_FORMATS[level + 1],
            )
            return True
        return False

    async def _call(self, request: LlmRequest, on_text: TextListener | None) -> LlmResponse:
        """Streamed when there is a listener and no schema (half a JSON object is of no use);
        a stream that brought nothing at all is asked again without streaming, since some
        servers (llama.cpp's) cannot stream what they have to say: a tool call, an error."""
        if on_text is None or request.response_schema is not None:
            return await self._post(request, None)
        try:
            return await self._post(request, on_text)
        except NoAnswer as exc:
            log.warning("[LLM] %s sent %s; asking again without streaming", request.model, exc)
        response = await self._post(request, None)
        if response.text:
            await on_text(response.text)
        return response

    async def _post(self, request: LlmRequest, on_text: TextListener | None) -> LlmResponse:
        params = self._params(request, streamed=on_text is not None)
        chat = self._client.chat.completions.with_streaming_response
        async with chat.create(**params) as response:
            body = _read(response)
            if on_text is None:
                content = await read_bounded(body)
                return from_completion(content, request.max_output_chars)
            chunks = stream_events(body)
            return await read_stream(chunks, on_text, request.max_output_chars)

    def _params(self, request: LlmRequest, streamed: bool) -> dict[str, Any]:
        """`create`'s arguments. The messages and tools, already in the API's shape (each
        made once, `ChatMessage.api_message`), go in `extra_body`, which the SDK sends as
        given and which takes precedence over its arguments (as its docs say): its `create`
        walks every argument against its typed dicts, about 1,400 recursive calls for a
        history of 40 messages and a few tools, ~5 ms of CPU a call, more than the rest of
        a turn together (bench/telegram_concurrency.py)."""
        body: dict[str, Any] = {"messages": api_messages(request.messages, request.images)}
        params: dict[str, Any] = {
            "model": request.model,
            "messages": [],  # sent from `extra_body`
            "temperature": request.temperature,
            self._max_tokens_field: request.max_output_tokens,
            "timeout": request.timeout_seconds,
            "extra_body": body,
        }
        if request.tools:
            body["tools"] = [spec.api_dict for spec in request.tools]
            # Some servers (llama-cpp-python's) ignore tools unless told they may use them.
            params["tool_choice"] = "auto"
        if request.response_schema is not None:
            response_format = self._response_format(request.model, request.response_schema)
            if response_format is not None:
                params["response_format"] = response_format
        if streamed:
            params["stream"] = True
            if self._stream_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    def _response_format(self, model: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        kind = RESPONSE_FORMATS[self._format_level.get(model, 0)]
        if kind == "none":
            return None  # the prompt describes the shape; the caller validates the answer
        if kind == "json_object":
            return {"type": "json_object"}
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }


def api_messages(
    messages: list[ChatMessage], images: tuple[ImageInput, ...] = ()
) -> list[dict[str, Any]]:
    """The messages in the API's shape: consecutive user messages (a turn that failed left
    its question unanswered) joined into one, since chat templates that need roles to
    alternate (Mistral's, Gemma's) refuse two in a row; the images go into the last user
    message, as content parts."""
    sent: list[dict[str, Any]] = []
    previous: ChatMessage | None = None
    for message in messages:
        if previous is not None and previous.role == message.role == "user":
            joined = f"{sent[-1]['content']}\n\n{message.content or ''}"
            sent[-1] = {"role": "user", "content": joined}
        else:
            sent.append(message.api_message)
        previous = message
    if images:
        users = [i for i, m in enumerate(sent) if m["role"] == "user"]
        if users:
            sent[users[-1]] = _with_images(sent[users[-1]], images)
    return sent


def _with_images(message: dict[str, Any], images: tuple[ImageInput, ...]) -> dict[str, Any]:
    """A user message as content parts: its text, then each image as a data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}]
    for image in images:
        encoded = base64.b64encode(image.data).decode("ascii")
        url = f"data:{image.mime_type};base64,{encoded}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {**message, "content": parts}


async def _read(response: openai.AsyncAPIResponse[Any]) -> AsyncIterator[bytes]:
    """The body's bytes, a failure on the way as the SDK's own error: a time-out as
    `APITimeoutError`, anything else as `APIConnectionError`, its cause kept. (The SDK maps
    the failures of sending a request, not those of reading its streamed body.)"""
    chunks = response.iter_bytes().__aiter__()
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except Exception as exc:
            request = response.http_response.request
            if _caused_by(exc, TimeoutError):
                raise openai.APITimeoutError(request=request) from exc
            raise openai.APIConnectionError(request=request) from exc
        yield chunk


def _caused_by(
    exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]
) -> bool:
    link: BaseException | None = exc
    while link is not None:
        if isinstance(link, kind):
            return True
        link = link.__cause__ or link.__context__
    return False


def _said(exc: BaseException) -> str:
    """What the server said, short and on one line, for a log: the body of an error status
    as it came (the SDK's message drops a body that is not JSON, such as a proxy's HTML
    page)."""
    if isinstance(exc, openai.APIStatusError):
        try:
            return quoted(exc.response.text)
        except Exception:  # a body not read (the stream was cut): the SDK's message then
            pass
    return quoted(str(exc))


def _unusable(exc: UnusableAnswer, request: LlmRequest) -> LlmError:
    """One log line with what the server sent instead of an answer, and what the user hears."""
    log.error("[LLM] %s sent no usable answer: %s", request.model, exc)
    if isinstance(exc, NoAnswer):
        return EmptyAnswer(notices.llm_empty(), str(exc))
    return LlmError(notices.llm_unreadable(), str(exc))


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
    return _caused_by(exc, (aiohttp.ClientConnectorError, ConnectionRefusedError))


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
    detail = f"{brief_failure(exc)} {tries} in {elapsed:.1f}s: {_said(exc)}"
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
