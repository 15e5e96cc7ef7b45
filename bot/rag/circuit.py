"""A circuit breaker, so that while LightRAG is down a turn pays for it at most once per cool-down.

Closed: calls go through. After `threshold` consecutive failures, or one time-out (a hanging
server costs every turn the whole timeout), it opens: calls fail at once without touching the
network. When the cool-down has passed, one call is let through as a probe (half-open): its
success closes the circuit, its failure opens it for another cool-down.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from enum import Enum

log = logging.getLogger("bot.rag")


class CircuitState(Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half-open"


class CircuitBreaker:
    """Thresholds are passed per call, so a runtime config edit applies at once."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        on_recovery: Callable[[], None] | None = None,
    ) -> None:
        self._clock = clock
        self.state = CircuitState.CLOSED
        self.consecutive_failures = 0
        self.last_error = ""
        self._opened_at = 0.0
        self._probe_started = 0.0
        self._cooldown = 0.0
        self.on_recovery = on_recovery
        """Called when a call succeeds after failures: the index worker stops waiting."""

    def allow(self, cooldown_seconds: float) -> bool:
        """Whether a call may go out now; in half-open state only the one probe may."""
        if self.state is CircuitState.CLOSED:
            return True
        now = self._clock()
        since = self._opened_at if self.state is CircuitState.OPEN else self._probe_started
        # A probe that never reported back (cancelled) must not keep the circuit shut for good.
        if now - since < cooldown_seconds:
            return False
        if self.state is CircuitState.OPEN:
            log.info("[RAG] circuit half-open: probing LightRAG")
        self.state = CircuitState.HALF_OPEN
        self._probe_started = now
        return True

    def record_success(self) -> None:
        recovered = self.state is not CircuitState.CLOSED or self.consecutive_failures > 0
        if self.state is not CircuitState.CLOSED:
            log.info("[RAG] circuit closed: LightRAG answers again")
        self.state = CircuitState.CLOSED
        self.consecutive_failures = 0
        self.last_error = ""
        if recovered and self.on_recovery is not None:
            self.on_recovery()

    def record_failure(
        self, error: str, threshold: int, cooldown_seconds: float, *, severe: bool
    ) -> None:
        """Count a failure; `severe` (a time-out) opens the circuit at once."""
        self.consecutive_failures += 1
        self.last_error = error
        should_open = (
            self.state is CircuitState.HALF_OPEN or severe or self.consecutive_failures >= threshold
        )
        if should_open:
            if self.state is not CircuitState.OPEN:
                log.warning(
                    "[RAG] circuit open after %d failure(s) (%s); skipping LightRAG for %gs",
                    self.consecutive_failures,
                    error,
                    cooldown_seconds,
                )
            self.state = CircuitState.OPEN
            self._opened_at = self._clock()
            self._cooldown = cooldown_seconds

    def retry_in(self) -> float:
        """Seconds until a probe may go out; 0 when calls go through."""
        if self.state is not CircuitState.OPEN:
            return 0.0
        return max(0.0, self._opened_at + self._cooldown - self._clock())

    def describe(self) -> str:
        if self.state is CircuitState.CLOSED:
            return "circuit closed"
        if self.state is CircuitState.HALF_OPEN:
            return "circuit half-open (probing)"
        return f"circuit open ({self.last_error}); next try in {self.retry_in():.0f}s"
