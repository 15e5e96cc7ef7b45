"""`/readyz`: every part's `Health`, looked at together, at most once per `CACHE_SECONDS`.

The checks run concurrently, each bounded by `CHECK_TIMEOUT_SECONDS`; however often a prober
(or anyone who can reach the port) asks, the LLM and LightRAG see at most one look per cache
period, and one slow part cannot hold up the answer past the time-out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.ports.health import Health, HealthCheck, HealthState

log = logging.getLogger(__name__)

CHECK_TIMEOUT_SECONDS = 3.0
CACHE_SECONDS = 2.0


@dataclass(frozen=True)
class ReadinessReport:
    parts: dict[str, Health]

    @property
    def ready(self) -> bool:
        """Ready unless a part is down: a degraded or switched-off part does not stop turns."""
        return all(health.state is not HealthState.DOWN for health in self.parts.values())

    def as_json(self) -> dict[str, object]:
        return {
            "status": "ready" if self.ready else "unready",
            "checks": {
                name: {"state": health.state.value, "detail": health.detail}
                for name, health in self.parts.items()
            },
        }


class Readiness:
    """The checks by part name (`llm`, `lightrag`, `telegram`, `store`)."""

    def __init__(
        self,
        checks: Mapping[str, HealthCheck],
        timeout_seconds: float = CHECK_TIMEOUT_SECONDS,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._checks = dict(checks)
        self._timeout = timeout_seconds
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._last: tuple[float, ReadinessReport] | None = None
        self._running: asyncio.Task[ReadinessReport] | None = None

    async def report(self) -> ReadinessReport:
        """The latest report, looked at anew when older than the cache period; callers who
        ask meanwhile share the one look in progress."""
        if self._last is not None and self._clock() - self._last[0] < self._cache_seconds:
            return self._last[1]
        if self._running is None or self._running.done():
            self._running = asyncio.create_task(self._look(), name="readiness")
        # shielded: a prober that hangs up does not cancel the look the others wait for
        return await asyncio.shield(self._running)

    async def _look(self) -> ReadinessReport:
        names = list(self._checks)
        results = await asyncio.gather(*(self._one(self._checks[n]) for n in names))
        report = ReadinessReport(dict(zip(names, results, strict=True)))
        self._last = (self._clock(), report)
        return report

    async def _one(self, check: HealthCheck) -> Health:
        try:
            return await asyncio.wait_for(check(), self._timeout)
        except TimeoutError:
            return Health(HealthState.DOWN, f"no answer within {self._timeout:g}s")
        except Exception as exc:  # a broken check says so; it never breaks the endpoint
            log.warning("[Ops] a readiness check failed: %s", type(exc).__name__)
            return Health(HealthState.DOWN, f"check failed ({type(exc).__name__})")
