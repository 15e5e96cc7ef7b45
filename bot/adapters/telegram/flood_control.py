"""Telegram's flood waits honoured exactly, per chat, so one flooded chat never stalls another.

When Telegram answers 429 with `retry_after`, the chat it concerns is paused for exactly that
long: every request for that chat waits, then the request is tried again (up to a bound).
PTB's own `AIORateLimiter` pauses every chat of the bot on any 429, which would let one busy
group stall all private chats; this limiter keeps the pause to the chat concerned.

Callers pass `rate_limit_args=0` for requests that must not be retried (a streaming preview
is better skipped than sent late).
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

log = logging.getLogger(__name__)

JSONResult = bool | dict[str, Any] | list[dict[str, Any]]
_ANY_CHAT = "*"


def retry_after_seconds(error: RetryAfter) -> float:
    """The wait Telegram asked for, in seconds, whichever form PTB exposes it in."""
    value = error._retry_after  # PTB's own limiter reads it so; the property may warn
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


class FloodControl(BaseRateLimiter[int]):
    """Reactive per-chat flood control: wait exactly `retry_after`, then retry."""

    def __init__(
        self,
        max_retries: int = 3,
        max_wait_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_retries = max_retries
        self._max_wait = max_wait_seconds
        self._clock = clock
        self._paused_until: dict[str, float] = {}

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def paused_for(self, chat_id: object) -> float:
        """Seconds until requests for `chat_id` may go out again (0 when not paused)."""
        until = max(
            self._paused_until.get(str(chat_id), 0.0), self._paused_until.get(_ANY_CHAT, 0.0)
        )
        return max(0.0, until - self._clock())

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, JSONResult]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> JSONResult:
        retries = self._max_retries if rate_limit_args is None else rate_limit_args
        chat = data.get("chat_id")
        key = _ANY_CHAT if chat is None else str(chat)
        attempt = 0
        while True:
            wait = self.paused_for(key)
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                seconds = retry_after_seconds(exc)
                self._pause(key, seconds)
                gives_up = attempt == retries or seconds > self._max_wait
                log.warning(
                    "[Telegram] flood control on %s for chat %s: wait %gs%s",
                    endpoint,
                    key,
                    seconds,
                    ", not retrying" if gives_up else f", then retry {attempt + 1}/{retries}",
                )
                if gives_up:
                    raise
                attempt += 1

    def _pause(self, key: str, seconds: float) -> None:
        until = self._clock() + seconds
        self._paused_until[key] = max(until, self._paused_until.get(key, 0.0))
        if len(self._paused_until) > 1024:  # forget pauses long over
            now = self._clock()
            self._paused_until = {k: t for k, t in self._paused_until.items() if t > now}
