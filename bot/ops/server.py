"""The operators' HTTP listener: `/healthz`, `/readyz`, `/metrics`, and nothing else.

aiohttp's server, which the bot already runs for Telegram's webhook: no new dependency, no
HTTP parsing of our own, and it serves on the bot's event loop without blocking it. Only GET
(and HEAD) is routed and no request body is ever read (aiohttp discards one as it arrives),
request and header lines are capped at 4 kB, and at most `MAX_CONCURRENT` requests for
`/readyz` and `/metrics` are answered at once (the rest get 503 at once), so nothing a client
sends grows the bot's memory. `/healthz` takes no place among them: it awaits nothing, so it
answers at once however many readiness looks are in progress (liveness never waits on
readiness).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.ops.errors import ListenFailed
from bot.ops.metrics import PrometheusMetrics
from bot.ops.readiness import Readiness

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 4096
MAX_CONCURRENT = 8
"""Probers and a scraper ask every few seconds; more at once come from someone else."""
BEAT_SECONDS = 0.5
STALLED_SECONDS = 5.0
"""`/healthz` fails when the event loop's heartbeat is this late: the loop is stuck."""


class LoopHeartbeat:
    """A task that wakes every `BEAT_SECONDS` and notes how late it woke (the loop's lag)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.last_beat = clock()
        self.worst_lag = 0.0
        """The largest lag seen over the last minute or so (reset every 120 beats)."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat(), name="loop-heartbeat")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    def late_by(self) -> float:
        """How long past its due time the next beat is now (0 while on time)."""
        return max(0.0, self._clock() - self.last_beat - BEAT_SECONDS)

    async def _beat(self) -> None:
        beats = 0
        while True:
            await asyncio.sleep(BEAT_SECONDS)
            now = self._clock()
            beats += 1
            if beats % 120 == 0:
                self.worst_lag = 0.0
            self.worst_lag = max(self.worst_lag, now - self.last_beat - BEAT_SECONDS)
            self.last_beat = now


class OpsServer:
    """Serves the probes and the metrics on `listen:port`; `start` and `stop` it with the app."""

    def __init__(self, readiness: Readiness, metrics: PrometheusMetrics) -> None:
        self._readiness = readiness
        self._metrics = metrics
        self.heartbeat = LoopHeartbeat()
        self._answering = 0
        self._app = web.Application(client_max_size=1)
        self._app.router.add_get("/healthz", self._healthz)
        self._app.router.add_get("/readyz", self._limited(self._readyz))
        self._app.router.add_get("/metrics", self._limited(self._metrics_text))
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        """The port listened on (the one asked for, or the one the OS chose for 0)."""

    @property
    def answering(self) -> int:
        """Requests for `/readyz` or `/metrics` being answered now."""
        return self._answering

    async def start(self, listen: str, port: int) -> None:
        """Listen on `listen:port`; raises `ListenFailed` when the port is taken or refused."""
        self.heartbeat.start()
        self._runner = web.AppRunner(
            self._app,
            access_log=None,
            handle_signals=False,
            max_line_size=MAX_LINE_BYTES,
            max_field_size=MAX_LINE_BYTES,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, listen, port)
        try:
            await site.start()
        except OSError as exc:
            await self.stop()
            reason = exc.strerror or type(exc).__name__
            raise ListenFailed(
                f"HTTP_PORT: cannot listen on {listen}:{port} ({reason}); "
                "choose a free port or unset HTTP_PORT"
            ) from None
        sockets = getattr(site._server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1]) if sockets else port
        log.info("[Ops] /healthz, /readyz and /metrics on %s:%d", listen, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.heartbeat.stop()

    def _limited(
        self, handler: Callable[[web.Request], Awaitable[web.Response]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def answer(request: web.Request) -> web.Response:
            if self._answering >= MAX_CONCURRENT:
                return web.Response(status=503, text="busy")
            self._answering += 1
            try:
                return await handler(request)
            finally:
                self._answering -= 1

        return answer

    async def _healthz(self, request: web.Request) -> web.Response:
        """Alive: this answer ran on the event loop, and its heartbeat is on time."""
        late = self.heartbeat.late_by()
        healthy = self.heartbeat.alive and late < STALLED_SECONDS
        body = {
            "status": "ok" if healthy else "stalled",
            "loopLagSeconds": round(max(late, self.heartbeat.worst_lag), 4),
        }
        return web.json_response(body, status=200 if healthy else 503)

    async def _readyz(self, request: web.Request) -> web.Response:
        report = await self._readiness.report()
        return web.json_response(report.as_json(), status=200 if report.ready else 503)

    async def _metrics_text(self, request: web.Request) -> web.Response:
        text, content_type = self._metrics.render()
        response = web.Response(body=text)
        response.headers["Content-Type"] = content_type
        return response
