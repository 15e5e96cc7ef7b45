"""Servers that fail the way real ones do: silent, or slow at one endpoint. For fault tests.

Both run on 127.0.0.1 in a daemon thread with their own event loop.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

from aiohttp import web


class _Threaded:
    def __init__(self) -> None:
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closers: list[Any] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Any:
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            for close in self._closers:
                asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        loop.run_until_complete(self._start())
        started.set()
        loop.run_forever()

    async def _start(self) -> None:
        raise NotImplementedError


class SilentServer(_Threaded):
    """Accepts connections and never answers: the hanging server."""

    async def _start(self) -> None:
        async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(-1)

        server = await asyncio.start_server(hold, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

        async def close() -> None:
            server.close()

        self._closers.append(close)


class SlowIndexingLightRag(_Threaded):
    """Answers LightRAG's query endpoints at once (nothing found) and indexing after a delay."""

    def __init__(self, index_delay: float) -> None:
        super().__init__()
        self.index_delay = index_delay
        self.indexed = 0

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/query/data", self._query_data)
        app.router.add_post("/query", self._query)
        app.router.add_post("/documents/text", self._index)
        app.router.add_get("/documents/track_status/{track}", self._track)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._closers.append(lambda: runner.cleanup())

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


def refused_port() -> int:
    """A port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
