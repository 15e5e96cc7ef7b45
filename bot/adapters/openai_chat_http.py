"""`POST /chat/completions` straight over aiohttp, for the calls every turn makes.

The `openai` SDK's request path (its options model, header merging, an httpx request turned
into an aiohttp one and back, and its SSE decoder) cost about as much CPU as the rest of a
turn together under load (bench/telegram_concurrency.py). Here the URL and headers are made
once, the body is the JSON `OpenAiLlm` joined, and the stream is split into events with
`bytes.split`. What the SDK gave the adapter stays the SDK's: the headers it would send
(`AsyncOpenAI.default_headers` and `auth_headers`), the timeouts its aiohttp transport sets,
and its exception types, made by its own `_make_status_error_from_response`, so retries,
Retry-After, fallbacks and user messages in `openai_llm.py` see exactly what they saw.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable
from ssl import SSLContext
from typing import Any, TypeVar

import aiohttp
import httpx2
import openai
from aiohttp.helpers import get_env_proxy_for_url
from openai import AsyncOpenAI
from yarl import URL

COMPLETIONS = "chat/completions"
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""A whole answer, or one streamed event, past this is refused with a clear error: a chat
answer is a few kilobytes, and no server may make the bot hold more than this."""
_STREAM_ERROR = "An error occurred during streaming"
T = TypeVar("T")


class ChatCompletionsHttp:
    """Chat completions of one `AsyncOpenAI` client's server, with its headers and key."""

    def __init__(self, client: AsyncOpenAI) -> None:
        self._client = client
        self.url = f"{str(client.base_url).rstrip('/')}/{COMPLETIONS}"
        headers = {**client.default_headers, **client.auth_headers}
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}
        self._headers["x-stainless-retry-count"] = "0"  # its own retries are off: ours retry
        # As the SDK's aiohttp client: certifi's CAs (or SSL_CERT_FILE), and the proxy that
        # HTTPS_PROXY / HTTP_PROXY / NO_PROXY give this URL, both worked out once.
        self._ssl = httpx2.create_ssl_context(trust_env=True)
        self._proxy, self._proxy_auth = _env_proxy(self.url)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def complete(self, body: bytes, timeout_seconds: float) -> object:
        """The server's answer as parsed JSON (a string when it sent something else)."""
        response = await self._post(body, timeout_seconds)
        async with response:
            content = await _read_bounded(response, self.url)
        try:
            return json.loads(content)
        except ValueError:
            return content.decode("utf-8", "replace")

    async def stream(self, body: bytes, timeout_seconds: float) -> ChatStream:
        """The answer's chunks as parsed JSON, as the server streams them."""
        response = await self._post(body, timeout_seconds)
        return ChatStream(response, self.url)

    async def _post(self, body: bytes, timeout_seconds: float) -> aiohttp.ClientResponse:
        """The response once its status is known to be a success; else the SDK's error."""
        if self._session is None:
            self._session = _new_session(self._ssl)
        # The SDK's aiohttp transport sets these from its `timeout` (connect, read, pool).
        timeout = aiohttp.ClientTimeout(
            sock_connect=timeout_seconds, sock_read=timeout_seconds, connect=timeout_seconds
        )
        request = self._session.post(
            self.url,
            data=body,
            headers={**self._headers, "x-stainless-read-timeout": str(timeout_seconds)},
            timeout=timeout,
            proxy=self._proxy,
            proxy_auth=self._proxy_auth,
        )
        response = await _reading(request, self.url)
        if response.status < 400:
            return response
        async with response:
            content = await _read_bounded(response, self.url)
        raise self._client._make_status_error_from_response(
            httpx2.Response(
                response.status,
                headers=list(response.raw_headers),
                content=content,
                request=_request(self.url),
            )
        )


class ChatStream:
    """The chunks of one streamed answer; `close` hangs up on the rest."""

    def __init__(self, response: aiohttp.ClientResponse, url: str) -> None:
        self._response = response
        self._url = url

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._chunks()

    async def close(self) -> None:
        """Drop the connection, so the server stops generating what nobody reads."""
        self._response.close()

    async def _chunks(self) -> AsyncIterator[Any]:
        events = _EventData()
        content = self._response.content
        try:
            while chunk := await _reading(content.readany(), self._url):
                if events.buffered > MAX_ANSWER_BYTES:
                    raise _too_large(self._url)
                for data in events.feed(chunk):
                    if data.startswith("[DONE]"):
                        # Read to the end, so the connection goes back to the pool.
                        await _read_bounded(self._response, self._url)
                        return
                    yield self._parsed(data)
            for data in events.end():
                if not data.startswith("[DONE]"):
                    yield self._parsed(data)
        finally:
            self._response.release()

    def _parsed(self, data: str) -> Any:
        chunk = json.loads(data)
        if isinstance(chunk, dict) and chunk.get("error"):
            raise _stream_error(chunk["error"], self._url)
        return chunk


class _EventData:
    """Server-sent events' data out of the bytes as they arrive: each event's `data:` lines
    joined; other fields ignored, as the SDK ignores them for chat completions."""

    def __init__(self) -> None:
        self._pending = b""
        self._data: list[str] = []
        self._data_size = 0

    @property
    def buffered(self) -> int:
        """Bytes of the event not yet complete, which a server could otherwise grow forever."""
        return len(self._pending) + self._data_size

    def feed(self, chunk: bytes) -> list[str]:
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        events: list[str] = []
        for line in lines:
            self._line(line.rstrip(b"\r"), events)
        return events

    def end(self) -> list[str]:
        """What is left when the body ends without a blank line after its last event."""
        events: list[str] = []
        self._line(self._pending.rstrip(b"\r"), events)
        self._pending = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[str]) -> None:
        if not line:
            if self._data:
                events.append("\n".join(self._data))
                self._data = []
                self._data_size = 0
        elif line.startswith(b"data:"):
            self._data.append(line[5:].removeprefix(b" ").decode())
            self._data_size += len(line)


def _new_session(ssl: SSLContext) -> aiohttp.ClientSession:
    # The SDK's connection limits (`DEFAULT_CONNECTION_LIMITS`: 1,000 connections, idle
    # ones kept 5 s), made inside the event loop, as aiohttp wants.
    connector = aiohttp.TCPConnector(limit=1000, keepalive_timeout=5.0, ssl=ssl)
    return aiohttp.ClientSession(connector=connector)


def _env_proxy(url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The proxy the environment names for `url`; none when it names none or NO_PROXY
    covers the host."""
    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None


async def _reading(step: Awaitable[T], url: str) -> T:
    """`await step`, with aiohttp's failures as the SDK's: a time-out as `APITimeoutError`,
    anything else on the way as `APIConnectionError`, the cause kept (`_unreachable` reads it)."""
    try:
        return await step
    except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
        raise openai.APITimeoutError(request=_request(url)) from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise openai.APIConnectionError(request=_request(url)) from exc


async def _read_bounded(response: aiohttp.ClientResponse, url: str) -> bytes:
    """The rest of the body, refused past `MAX_ANSWER_BYTES`."""
    parts: list[bytes] = []
    size = 0
    while chunk := await _reading(response.content.readany(), url):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise _too_large(url)
        parts.append(chunk)
    return b"".join(parts)


def _too_large(url: str) -> openai.APIError:
    limit = MAX_ANSWER_BYTES // (1024 * 1024)
    return openai.APIError(
        f"the LLM server's answer is larger than {limit} MB", request=_request(url), body=None
    )


def _stream_error(error: object, url: str) -> openai.APIError:
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else _STREAM_ERROR
    return openai.APIError(text, request=_request(url), body=error)


def _request(url: str) -> httpx2.Request:
    """The request an SDK exception names (only made when one is raised)."""
    return httpx2.Request("POST", url)
