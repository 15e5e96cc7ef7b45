"""The webhook receiver: Telegram's posts go into the inbox, bounded before any read.

PTB's own receiver (tornado) reads a whole body, up to 100 MB, before it looks at the secret,
so three unauthenticated 100 MB posts took the bot from 85 to 456 MB. Here the secret header is
compared first (in constant time) and a post without it is refused unread (logged once a
minute at most, with a count of the others); an authenticated body is read only up to
`MAX_BODY_BYTES`, and at most `MAX_CONCURRENT_POSTS` are read at once.

Telegram hears 200 only once the update is journaled (`accept`, the inbox's `take`); when it
cannot be (the database is away), it hears 503 and posts the update again later. With several
processes behind a load balancer, whichever receives a post journals it, and the inbox hands
it to the process that holds its chat (`bot/adapters/postgres/inbox.py`).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.logging_setup import ThrottledWarning

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
"""An update is a few kB (a message is at most 4096 characters); a megabyte is ample."""
MAX_CONCURRENT_POSTS = 4
"""Telegram posts one at a time (`max_connections=1`); more at once come from someone else."""
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookReceiver:
    """An aiohttp server on `listen:port` taking posts to `path` into `accept`."""

    def __init__(
        self,
        path: str,
        secret: str,
        accept: Callable[[list[dict[str, Any]]], Awaitable[None]],
        max_body_bytes: int = MAX_BODY_BYTES,
        max_concurrent: int = MAX_CONCURRENT_POSTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock`: what the refused posts' log line is rate-limited by."""
        self._secret = secret.encode()
        self._forged = ThrottledWarning(
            log,
            "[Telegram] webhook post without the right secret refused, body unread",
            clock=clock,
        )
        self._accept = accept
        self._max_body = max_body_bytes
        self._max_concurrent = max_concurrent
        self._reading = 0
        self._app = web.Application(client_max_size=max_body_bytes)
        self._app.router.add_post(path.rstrip("/") or "/", self._post)
        if path.rstrip("/"):
            self._app.router.add_post(path.rstrip("/") + "/", self._post)
        self._runner: web.AppRunner | None = None

    @property
    def reading(self) -> int:
        """How many posts' bodies are being read now (at most `max_concurrent`)."""
        return self._reading

    async def start(self, listen: str, port: int) -> None:
        self._runner = web.AppRunner(self._app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, listen, port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _post(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            self._forged()  # anyone can post: one line a minute at most
            return _refuse(403, "forbidden")
        if request.content_length is not None and request.content_length > self._max_body:
            log.warning("[Telegram] webhook post of %d bytes refused", request.content_length)
            return _refuse(413, "too large")
        if self._reading >= self._max_concurrent:
            log.warning("[Telegram] webhook: %d posts already being read; refused", self._reading)
            return _refuse(503, "busy")
        self._reading += 1
        try:
            raw = await request.read()  # aiohttp stops past client_max_size: 413
            data = json.loads(raw)
        except web.HTTPRequestEntityTooLarge:
            log.warning("[Telegram] webhook post over %d bytes refused", self._max_body)
            return _refuse(413, "too large")
        except (ValueError, RecursionError, TypeError, KeyError) as exc:
            log.warning("[Telegram] webhook post that is no update refused: %s", type(exc).__name__)
            return web.Response(status=400, text="not an update")
        finally:
            self._reading -= 1
        if not isinstance(data, dict) or type(data.get("update_id")) is not int:
            return web.Response(status=400, text="not an update")
        try:
            await self._accept([data])  # journaled (fsynced, committed) before Telegram hears 200
        except Exception as exc:
            log.warning("[Telegram] webhook: update not journaled (%s); Telegram will resend", exc)
            return web.Response(status=503, text="try again")
        return web.json_response({})


def _refuse(status: int, text: str) -> web.Response:
    response = web.Response(status=status, text=text)
    response.force_close()  # an unread body is not drained: the connection goes
    return response
