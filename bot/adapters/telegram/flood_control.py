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
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from bot.adapters.telegram.send_budget import SendBudget
from bot.retry import RetryPolicy, retry_after_seconds

log = logging.getLogger(__name__)

JSONResult = bool | dict[str, Any] | list[dict[str, Any]]
_ANY_CHAT = "*"


def _flood_wait(error: BaseException) -> float:
    return retry_after_seconds(error) or 0.0


def flood_retry(max_wait_seconds: float) -> RetryPolicy:
    """A request Telegram answered with a flood wait: tried again once the wait is over, unless
    it is longer than `max_wait_seconds` (a reply that late is worse than an error)."""
    return RetryPolicy(
        "[Telegram]",
        lambda error: isinstance(error, RetryAfter) and _flood_wait(error) <= max_wait_seconds,
        log_retries=False,  # `FloodControl` logs each flood wait, with its endpoint and chat
    )


class FloodControl(BaseRateLimiter[int]):
    """Per-chat flood control: new messages kept within Telegram's limits (`budget`), and a
    flood wait met anyway waited out exactly (`retry_after`), then retried."""

    def __init__(
        self,
        budget: SendBudget | None = None,
        max_retries: int = 3,
        max_wait_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`budget` None: no limit before a 429 (tests of the flood waits themselves)."""
        self._budget = budget
        self._max_retries = max_retries
        self._max_wait = max_wait_seconds
        self._retry = flood_retry(max_wait_seconds)
        self._retry_with: dict[int, RetryPolicy] = {}
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

        async def once() -> JSONResult:
            nonlocal attempt
            wait = self.paused_for(key)  # a flood wait another request of this chat met
            if wait > 0:
                await asyncio.sleep(wait)
            if self._budget is not None:
                await self._budget.spend(endpoint, chat)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                seconds = _flood_wait(exc)
                self._pause(key, seconds)
                gives_up = attempt == retries or seconds > self._max_wait
                log.warning(
                    "[Telegram] flood control on %s for chat %s: wait %gs%s",
                    endpoint,
                    key,
                    seconds,
                    ", not retrying" if gives_up else f", then retry {attempt + 1}/{retries}",
                )
                attempt += 1
                raise

        # The first try goes straight out: nearly every request succeeds at once, and a retry
        # controller costs about 20 µs, which every Bot API request would pay.
        try:
            return await once()
        except RetryAfter as exc:
            if retries == 0 or not self._retry.retryable(exc):
                raise
        # Flooded: `once` waits the chat's pause (this flood wait) out and tries again; the
        # policy bounds the tries and waits out any further flood wait (Retry-After).
        return await self._policy(retries).call(once)

    def _policy(self, retries: int) -> RetryPolicy:
        policy = self._retry_with.get(retries)
        if policy is None:
            policy = self._retry_with[retries] = self._retry.limited(attempts=retries)
        return policy

    def _pause(self, key: str, seconds: float) -> None:
        until = self._clock() + seconds
        self._paused_until[key] = max(until, self._paused_until.get(key, 0.0))
        if len(self._paused_until) > 1024:  # forget pauses long over
            now = self._clock()
            self._paused_until = {k: t for k, t in self._paused_until.items() if t > now}
