"""An aiohttp server on 127.0.0.1 with its own event loop on a daemon thread.

The fakes built on it (LLM, Bot API) serve in-process async tests, benchmarks and bots run as
separate processes alike, and never compete with the test's own event loop.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Self

from aiohttp import web


class BackgroundServer:
    """Subclasses add routes in `routes`; use as `with Server() as server:` or start/stop."""

    name = "fake-server"

    def __init__(self, port: int = 0) -> None:
        self._requested_port = port
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def on_stop(self) -> None:
        """Called on the server's loop before the HTTP server closes."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(started,), name=self.name, daemon=True
        )
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError(f"{self.name} did not start")

    def restart(self) -> None:
        """Start again after `stop`, on the port it had (a server coming back after an outage)."""
        self._requested_port = self.port
        self.start()

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    async def _shutdown(self) -> None:
        await self.on_stop()
        assert self._runner is not None
        await self._runner.cleanup()
        # Handlers still running past the shutdown time-out are cancelled, not abandoned.
        current = asyncio.current_task()
        pending = [task for task in asyncio.all_tasks() if task is not current]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _serve(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.routes(app)
        # Stopping cuts requests still in progress short (a scripted 10 s answer, a long poll).
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", self._requested_port)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        started.set()
        loop.run_forever()
        loop.close()


def free_port() -> int:
    """A loopback port nothing listens on (yet): for a server to start on, or to be refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
