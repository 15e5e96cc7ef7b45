"""One request to LightRAG's REST API, bounded and through the circuit breaker: the plumbing
under `LightRagAdapter` (`lightrag.py`).

Every call is bounded: `rag.timeoutSeconds` is a deadline for the whole call (httpx's own
time-out is per read, so a server trickling a byte at a time would hold it for ever), and an
answer is read as a stream and dropped past `MAX_ANSWER_BYTES`. A query a user waits on also
gives up as soon as another query times out (`on_turn_path`). The key goes in `X-API-Key`
(the server treats `Authorization: Bearer` as a JWT and rejects it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable
from typing import Any

import httpx
from pydantic import SecretStr

from bot.config.model import RagConfig
from bot.rag.circuit import CircuitBreaker
from bot.rag.model import RagRejected, RagUnavailable

log = logging.getLogger("bot.rag")

MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""A `/query/data` answer for 50 users is well under 1 MB; past this the server misbehaves."""
_HEADER_SAFE = re.compile(r"[\x20-\x7e]+")
"""What an HTTP header value carries: printable ASCII (httpx refuses the rest, naming it)."""
UNUSABLE_KEY = (
    "the API key (RAG_API_KEY or rag.apiKey) has characters an HTTP header cannot carry "
    "(non-ASCII or control characters); no request was made"
)


class CallFailed(RagUnavailable):
    """A failed call, with the short text the spec's log lines use."""

    def __init__(self, brief: str, *, http_status: int | None = None, quiet: bool = False) -> None:
        super().__init__(brief)
        self.brief = brief
        self.http_status = http_status
        self.quiet = quiet
        """Skipped rather than failed (circuit open, stall): logged at debug level only."""


class AnswerTooLarge(Exception):
    """The server sent more than `MAX_ANSWER_BYTES`; reading stopped there."""

    def __init__(self, size: int) -> None:
        super().__init__(
            f"answer over {megabytes(MAX_ANSWER_BYTES)} ({size} bytes or more); stopped reading"
        )


class LightRagHttp:
    """Requests to one LightRAG server on one `httpx.AsyncClient`, through `breaker`."""

    def __init__(
        self, client: httpx.AsyncClient, breaker: CircuitBreaker, env_api_key: SecretStr | None
    ) -> None:
        """`env_api_key` (`RAG_API_KEY`) wins over the runtime config's `rag.apiKey`."""
        self._client = client
        self._breaker = breaker
        self._env_api_key = env_api_key
        self._stalled: asyncio.Event | None = None
        """Set when a query times out: the other queries in flight give up at once."""

    async def call(
        self,
        rag: RagConfig,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        on_turn_path: bool = False,
    ) -> Any:
        """One request through the circuit breaker; JSON answer, or a typed failure.

        `on_turn_path` requests (queries a user is waiting on) also give up as soon as another
        query times out: when the server stalls, a wave of concurrent turns then pays one
        time-out between them, not one each.
        """
        self._headers(rag)  # an unusable key fails here, never as a failure of the server
        if not self._breaker.allow(rag.circuit_cooldown_seconds):
            raise CallFailed(f"circuit open ({self._breaker.last_error})", quiet=True)
        request = self.fetch(rag, method, path, body, rag.timeout_seconds)
        try:
            status, content = await (self._unless_stalled(request) if on_turn_path else request)
        except (httpx.TimeoutException, TimeoutError):
            brief = f"timed out after {rag.timeout_seconds:g}s"
            raise self._failed(rag, brief, severe=True) from None
        except httpx.HTTPError as exc:
            raise self._failed(rag, describe_error(exc)) from None
        except AnswerTooLarge as exc:
            raise self._failed(rag, str(exc)) from None
        if status in (401, 403):
            log.error(
                "[RAG] Configuration error: LightRAG refused the API key (HTTP %d). Set "
                "RAG_API_KEY (or rag.apiKey) to the server's LIGHTRAG_API_KEY.",
                status,
            )
            raise self._failed(rag, f"HTTP {status}", http_status=status)
        if status == 429 or status >= 500:
            raise self._failed(rag, f"HTTP {status}", http_status=status)
        if status >= 400:
            self._breaker.record_success()  # the server is up; it refused this request
            raise RagRejected(f"HTTP {status}: {_detail(content)}", http_status=status)
        try:
            answer = json.loads(content)
        except ValueError:
            raise self._failed(rag, "invalid JSON in the answer") from None
        self._breaker.record_success()
        return answer

    async def fetch(
        self,
        rag: RagConfig,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        deadline: float,
    ) -> tuple[int, bytes]:
        """Status and body of one request, within `deadline` seconds in all, at most
        `MAX_ANSWER_BYTES` read (else `AnswerTooLarge`)."""
        headers = self._headers(rag)
        async with asyncio.timeout(deadline):
            async with self._client.stream(
                method, _url(rag, path), json=body, headers=headers, timeout=deadline
            ) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
                    raise AnswerTooLarge(int(declared))
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_ANSWER_BYTES:
                        raise AnswerTooLarge(size)
                    chunks.append(chunk)
                return response.status_code, b"".join(chunks)

    def _failed(
        self, rag: RagConfig, brief: str, *, severe: bool = False, http_status: int | None = None
    ) -> CallFailed:
        self._breaker.record_failure(
            brief, rag.circuit_failure_threshold, rag.circuit_cooldown_seconds, severe=severe
        )
        if severe and self._stalled is not None:
            self._stalled.set()
            self._stalled = None
        return CallFailed(brief, http_status=http_status)

    async def _unless_stalled(self, request: Awaitable[tuple[int, bytes]]) -> tuple[int, bytes]:
        """`request`'s answer, unless another query times out first (then a quiet failure)."""
        if self._stalled is None:
            self._stalled = asyncio.Event()
        stalled = asyncio.ensure_future(self._stalled.wait())
        answer = asyncio.ensure_future(request)
        try:
            await asyncio.wait({answer, stalled}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            answer.cancel()
            raise
        finally:
            stalled.cancel()
        if answer.done():
            return answer.result()
        answer.cancel()
        raise CallFailed("gave up: another query to LightRAG just timed out", quiet=True)

    def _headers(self, rag: RagConfig) -> dict[str, str]:
        """The key, stripped of the line break a paste leaves after it. One a header cannot
        carry is refused by a `CallFailed` that names its problem: httpx's own error would
        quote it (into `/status` and the log), or not be an `httpx.HTTPError` at all."""
        key = self._env_api_key.get_secret_value() if self._env_api_key else ""
        key = (key.strip() or rag.api_key.get_secret_value()).strip()
        if key and not _HEADER_SAFE.fullmatch(key):
            raise CallFailed(UNUSABLE_KEY)
        return {"X-API-Key": key} if key else {}


def log_failure(what: str, exc: CallFailed) -> None:
    """One log line in the spec's format: debug for a skipped call, else a warning."""
    if exc.quiet:
        log.debug("[RAG] %s skipped: %s", what, exc.brief)
    elif exc.http_status is not None:
        log.warning("[RAG] %s failed: %s", what, exc.brief)
    else:
        log.warning("[RAG] %s error: %s", what, exc.brief)


def _url(rag: RagConfig, path: str) -> str:
    return rag.url.rstrip("/") + path


def describe_error(exc: Exception) -> str:
    """An HTTP error in a few words, for the log and `/status`."""
    if isinstance(exc, httpx.ConnectError):
        return "Connection refused"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


def _detail(content: bytes) -> str:
    try:
        detail = json.loads(content).get("detail", "")
    except (ValueError, AttributeError):
        detail = content.decode("utf-8", "replace")
    return str(detail)[:200]


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"
