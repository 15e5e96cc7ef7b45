"""The ordered pipeline: systems run by ascending order, each isolated from the others' failures."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Protocol

from bot.pipeline.context import SystemFailure, TurnContext
from bot.ports.metrics import NO_METRICS, PipelineObserver, TurnOutcome

log = logging.getLogger(__name__)


class System(Protocol):
    """One step of a turn. Depends on ports, never on another system or an adapter."""

    name: str
    order: int

    def should_process(self, ctx: TurnContext) -> bool: ...

    async def process(self, ctx: TurnContext) -> None: ...


class DuplicateOrderError(ValueError):
    """Two systems claim the same order, so their relative order would be an accident."""


class Pipeline:
    """Runs systems in order; a system that raises is logged and recorded, and the next runs.
    Each system's time and each turn's outcome go to `observer` (the operators' metrics)."""

    def __init__(self, systems: Iterable[System], observer: PipelineObserver = NO_METRICS) -> None:
        self._observer = observer
        self.systems: list[System] = sorted(systems, key=lambda s: s.order)
        seen: dict[int, str] = {}
        for system in self.systems:
            if system.order in seen:
                raise DuplicateOrderError(
                    f"systems {seen[system.order]!r} and {system.name!r} both have order "
                    f"{system.order}; give each a unique order"
                )
            seen[system.order] = system.name

    async def run(self, ctx: TurnContext) -> None:
        started = time.perf_counter()
        outcome = TurnOutcome.CANCELLED
        try:
            for system in self.systems:
                await self._run_system(system, ctx)
            outcome = TurnOutcome.FAILED if ctx.failures else TurnOutcome.OK
        finally:
            self._observer.turn_ran(time.perf_counter() - started, outcome)

    async def _run_system(self, system: System, ctx: TurnContext) -> None:
        """One system, isolated; its time is reported only when it ran (or raised)."""
        started = time.perf_counter()
        ran = failed = False
        try:
            if system.should_process(ctx):
                ran = True
                await system.process(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            ran = failed = True
            log.exception("[Pipeline] %s failed: %s", system.name, exc)
            ctx.failures.append(SystemFailure(system.name, f"{type(exc).__name__}: {exc}"))
        finally:
            elapsed = time.perf_counter() - started
            if ran:
                self._observer.system_ran(system.name, elapsed, failed)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("[Pipeline] %s took %.2f ms", system.name, elapsed * 1000)
