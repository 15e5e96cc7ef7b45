"""Trying again, in two kinds that answer different questions; each is defined once, here.

`RetryPolicy` is for a *request* someone is waiting on: a reply to send, an LLM answer, an
embedding, a deletion a user asked for, the bot's own start. It is tried again a few times
within a time bound, only for failures that may pass (what `retryable` says), waiting what the
server asked for when it said so (`retry_after_seconds`, the one reader of such hints), else
an exponential back-off. Every adapter builds its own from it (tenacity underneath).

`Backoff` is for *background work* whose service is down (the LightRAG index worker, the
embedding of memory items, long polling): it rests for a time that doubles with consecutive
failures, up to a ceiling, and tries again for as long as the bot runs, which meanwhile goes on
without it.

Each retry of a request is counted per service (`retries_so_far`), process-wide like the
policies themselves, for the operators' metrics (`bot/ops/metrics.py`).

Neither is the circuit breaker (`bot/rag/circuit.py`), which decides whether a call to LightRAG
is made at all, nor `DiskHealth`'s fixed-interval retry of writes the disk refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dtm
import email.utils
import logging
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random_exponential,
)
from tenacity.stop import StopBaseT

log = logging.getLogger(__name__)

T = TypeVar("T")

_SERVICE = re.compile(r"\[([^\]]+)\]")
_retries: Counter[str] = Counter()
_retries_lock = threading.Lock()  # a retry may run on any thread's loop (tests, benchmarks)


def retries_so_far() -> dict[str, int]:
    """Request retries made by this process, by service name without brackets (`LLM`)."""
    with _retries_lock:
        return dict(_retries)


def _count_retry(service: str) -> None:
    named = _SERVICE.match(service)  # "[RAG] delete" counts as RAG
    with _retries_lock:
        _retries[named.group(1) if named else service.strip() or "unnamed"] += 1


def retry_after_seconds(error: BaseException) -> float | None:
    """How long the server asked us to wait before trying again; None when it did not say.

    Reads Telegram's flood wait (PTB's `RetryAfter` keeps it as `_retry_after`, a timedelta;
    the public property warns while PTB migrates its type) and an HTTP answer's `retry-after-ms`
    or `Retry-After` (seconds, or an HTTP date), found on the error's `response` as the `openai`
    SDK and httpx attach it.
    """
    flood_wait = getattr(error, "_retry_after", None)
    if isinstance(flood_wait, dtm.timedelta):
        return max(0.0, flood_wait.total_seconds())
    if isinstance(flood_wait, int | float):
        return max(0.0, float(flood_wait))
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def _error_name(error: BaseException | None) -> str:
    return str(error) or type(error).__name__


@dataclass(frozen=True)
class RetryPolicy:
    """How requests to one service are tried again: which failures, how often, how long.

    Bounded twice: at most `attempts` tries, and no wait that would end past `max_seconds` after
    the first try began (a Retry-After longer than that ends the retrying at once). Between
    tries: the server's hint when it gave one, else `first_wait_seconds` doubling per failure up
    to `max_wait_seconds` (with `jitter`, a random part of that, so many clients spread out).
    """

    service: str
    """The log prefix, e.g. `[LLM]`."""
    retryable: Callable[[BaseException], bool]
    attempts: int = 4
    max_seconds: float | None = None
    first_wait_seconds: float = 0.5
    max_wait_seconds: float = 20.0
    jitter: bool = True
    describe: Callable[[BaseException | None], str] = _error_name
    """A short name for a failure in the retry log line (never a secret)."""
    log_retries: bool = True
    """False when the caller logs each failure itself, with more to say about it."""
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    """How a wait is waited (tests record it instead)."""

    def limited(self, attempts: int, max_seconds: float | None = None) -> RetryPolicy:
        """This policy with other bounds (a turn's `llm.retryAttempts`, a preview's one try)."""
        bound = self.max_seconds if max_seconds is None else max_seconds
        return dataclasses.replace(self, attempts=attempts, max_seconds=bound)

    def retrying(self) -> AsyncRetrying:
        """A fresh tenacity controller: `async for attempt in policy.retrying(): with attempt:`."""
        stop: StopBaseT = stop_after_attempt(self.attempts)
        if self.max_seconds is not None:
            stop = stop_after_attempt(self.attempts) | stop_before_delay(self.max_seconds)
        return AsyncRetrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception(self.retryable),
            before_sleep=self._before_retry,
            reraise=True,
            sleep=self.sleep,
        )

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """`request()`'s result, tried again as this policy says; the last error otherwise.

        The first try runs bare: most requests succeed at once, and a tenacity controller
        costs some 40 us of CPU a call (two a message: the LLM's, the reply's). A failure worth
        another try goes to one as its attempt 1, with the time that try took off the bound.
        """
        started = time.monotonic()
        try:
            return await request()
        except Exception as error:
            if self.attempts <= 1 or not self.retryable(error):
                raise
            first_failure: Exception | None = error
        policy = self
        if self.max_seconds is not None:
            left = max(0.0, self.max_seconds - (time.monotonic() - started))
            policy = self.limited(self.attempts, left)

        async def again() -> T:
            nonlocal first_failure
            if first_failure is not None:
                failure, first_failure = first_failure, None
                raise failure
            return await request()

        async for attempt in policy.retrying():
            with attempt:
                return await again()
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        hinted = retry_after_seconds(error) if error is not None else None
        if hinted is not None:
            return hinted
        growing = wait_random_exponential if self.jitter else wait_exponential
        return float(growing(multiplier=self.first_wait_seconds, max=self.max_wait_seconds)(state))

    def _before_retry(self, state: RetryCallState) -> None:
        _count_retry(self.service)
        if self.log_retries:
            self._log_retry(state)

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s attempt %d failed (%s); retrying in %.1fs",
            self.service,
            state.attempt_number,
            self.describe(error),
            wait,
        )


@dataclass(frozen=True)
class Backoff:
    """How long background work rests after consecutive failures: `first_seconds`, doubling
    with each further failure, at most `longest_seconds`, varied by ±`jitter` (a fraction) so
    that workers started together do not knock together."""

    first_seconds: float
    longest_seconds: float
    jitter: float = 0.0

    def after(self, failures: int) -> float:
        """The rest after `failures` consecutive failures (none: no rest)."""
        if failures <= 0:
            return 0.0
        rest = min(self.first_seconds * 2.0 ** min(failures - 1, 64), self.longest_seconds)
        if self.jitter:
            rest *= random.uniform(1 - self.jitter, 1 + self.jitter)
        return rest
