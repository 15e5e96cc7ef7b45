"""The HTTP client for a streamable HTTP MCP server: its headers, its time-outs, and a cap on
each answer's size.

The SDK caps one server-sent event (`max_sse_event_size`) but reads a plain JSON answer whole:
`CappedTransport` stops reading a non-event-stream body past the cap, which the SDK reports
to the one call it answered (the connection stays up).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx2

_MCP_READ_SECONDS = 300.0
"""An event stream may stay quiet this long: a call's own bound is the server's timeout."""


class ResponseTooLarge(httpx2.StreamError):
    """An answer passed the server's `maxResponseKilobytes`."""


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, max_bytes: int) -> None:
        self._inner = inner
        self._max_bytes = max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._max_bytes:
                raise ResponseTooLarge(f"the answer passed {self._max_bytes:,} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """Wraps the default transport; bodies other than event streams stop at `max_bytes`."""

    def __init__(self, max_bytes: int) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response  # capped per event by the SDK
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _CappedBody(response.stream, self._max_bytes)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def mcp_http_client(
    headers: dict[str, str],
    timeout_seconds: float,
    max_bytes: int,
    on_refusal: Callable[[int], None],
) -> httpx2.AsyncClient:
    """A client for one server: connecting and sending bounded by its timeout; `on_refusal`
    hears each HTTP error status (401 says more than the SDK's "an error response")."""

    async def note_refusal(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            on_refusal(response.status_code)

    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(timeout_seconds, read=max(_MCP_READ_SECONDS, timeout_seconds)),
        transport=CappedTransport(max_bytes),
        event_hooks={"response": [note_refusal]},
    )
