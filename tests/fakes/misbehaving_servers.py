"""Servers that fail the way real ones do, for fault tests and benchmarks.

- `SilentServer` accepts requests and never answers: a hanging server.
- `SlowIndexingLightRag` answers LightRAG's query endpoints at once (nothing found) and its
  indexing endpoint after a delay.
- `TricklingServer` answers 200 at once, then sends its body one byte at a time, slowly, so
  no single read ever times out.
- `OversizedServer` answers with a body of any size, streamed in chunks with no length given.
- `RecordingProxy` stands in front of a real server, records every request, and can be told
  to hang or to answer 502 as if the server behind it were gone.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.background_server import BackgroundServer, free_port

refused_port = free_port
"""A port nothing listens on, so a connection to it is refused."""


class _Hanging(BackgroundServer):
    """Requests can be held "forever": until the server stops, which releases them."""

    _released: asyncio.Event

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        self._released = asyncio.Event()

    async def on_stop(self) -> None:
        self._released.set()

    async def hold(self) -> web.Response:
        await self._released.wait()
        return web.Response(status=503, text="server stopping")


class SilentServer(_Hanging):
    name = "silent-server"

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_route("*", "/{tail:.*}", self._never)

    held = 0
    """Requests received so far (each is held)."""

    async def _never(self, request: web.Request) -> web.Response:
        self.held += 1
        return await self.hold()


class TricklingServer(_Hanging):
    """Every request: 200, then one byte of a never-ending JSON string every `interval` s."""

    name = "trickling-server"

    def __init__(self, interval: float) -> None:
        super().__init__()
        self.interval = interval

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_route("*", "/{tail:.*}", self._trickle)

    async def _trickle(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"response": "')
        try:
            while not self._released.is_set():
                await asyncio.sleep(self.interval)
                await response.write(b"x")
        except (ConnectionError, RuntimeError):
            pass  # the client hung up, as it should
        return response


class OversizedServer(BackgroundServer):
    """Every request: 200 and `size` bytes of one JSON string, chunked, no Content-Length;
    `sent` counts the bytes the client took before it hung up."""

    name = "oversized-server"
    CHUNK = 64 * 1024

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.sent = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._flood)

    async def _flood(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"response": "')
        chunk = b"x" * self.CHUNK
        try:
            while self.sent < self.size:
                await response.write(chunk)
                self.sent += len(chunk)
            await response.write(b'"}')
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading
        return response


class SlowIndexingLightRag(BackgroundServer):
    name = "slow-indexing-lightrag"

    def __init__(self, index_delay: float) -> None:
        super().__init__()
        self.index_delay = index_delay
        self.indexed = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/query/data", self._query_data)
        app.router.add_post("/query", self._query)
        app.router.add_post("/documents/text", self._index)
        app.router.add_get("/documents/track_status/{track}", self._track)

    async def _query_data(self, request: web.Request) -> web.Response:
        empty = {"entities": [], "relationships": [], "chunks": [], "references": []}
        return web.json_response({"status": "success", "message": "", "data": empty})

    async def _query(self, request: web.Request) -> web.Response:
        return web.json_response({"response": "[no-context]", "llm_generated": False})

    async def _index(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.index_delay)
        self.indexed += 1
        return web.json_response({"status": "success", "message": "", "track_id": "t"})

    async def _track(self, request: web.Request) -> web.Response:
        return web.json_response({"track_id": "t", "documents": [{"id": f"doc-{self.indexed}"}]})


@dataclass(frozen=True)
class ProxiedRequest:
    method: str
    path: str
    body: Any
    at: float


class RecordingProxy(_Hanging):
    """Forwards everything to `upstream`; `mode` is "forward", "hang" or "down" (502)."""

    name = "recording-proxy"

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")
        self.mode = "forward"
        self._lock = threading.Lock()
        self._requests: list[ProxiedRequest] = []
        self._session: aiohttp.ClientSession | None = None

    def requests(self, path: str | None = None) -> list[ProxiedRequest]:
        with self._lock:
            return [r for r in self._requests if path is None or r.path == path]

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_route("*", "/{tail:.*}", self._forward)

    async def on_stop(self) -> None:
        await super().on_stop()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        with self._lock:
            self._requests.append(ProxiedRequest(request.method, request.path, body, time.time()))
        if self.mode == "hang":
            return await self.hold()
        if self.mode == "down":
            return web.Response(status=502, text="upstream gone")
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        headers = {k: v for k, v in request.headers.items() if k.lower() in _PASSED_HEADERS}
        try:
            async with self._session.request(
                request.method, self.upstream + request.path_qs, data=raw, headers=headers
            ) as answer:
                content = await answer.read()
                kind = answer.headers.get("Content-Type", "application/json")
                return web.Response(
                    body=content, status=answer.status, content_type=kind.split(";")[0]
                )
        except aiohttp.ClientError:
            return web.Response(status=502, text="upstream unreachable")


_PASSED_HEADERS = {"content-type", "x-api-key", "authorization", "accept"}
