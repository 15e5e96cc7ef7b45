"""Readiness checks of the parts that have no `health` of their own: LightRAG as the bot uses
it (off, or degraded without failing a turn), the data dir's store, and PostgreSQL when
`DATABASE_URL` is set."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bot.adapters.postgres.errors import DatabaseDown
from bot.config.model import RuntimeConfig
from bot.ports.health import Health, HealthState
from bot.ports.rag import RagHealthCheck
from bot.storage.atomic import write_atomic
from bot.storage.disk import DiskHealth, describe

if TYPE_CHECKING:
    from bot.adapters.postgres.database import Database

RAG_LOOK_SECONDS = 2.0
"""Within the readiness check's own bound: a hanging LightRAG reads as degraded, not down."""
PROBE_FILE = ".ready-probe"


class RagReadiness:
    """LightRAG never makes the bot unready: without it turns go on without long-term recall."""

    def __init__(self, config: Callable[[], RuntimeConfig], rag: RagHealthCheck) -> None:
        self._config = config
        self._rag = rag

    async def __call__(self) -> Health:
        if not self._config().rag.enabled:
            return Health(HealthState.OFF, "rag.enabled is false")
        try:
            health = await asyncio.wait_for(self._rag.health(), RAG_LOOK_SECONDS)
        except TimeoutError:
            return Health(HealthState.DEGRADED, "no answer; turns go on without recall")
        if health.healthy:
            return Health(HealthState.OK, "healthy")
        # `health.detail` names the server's address: `/status` shows it to operators only
        return Health(HealthState.DEGRADED, "not healthy (see /status); turns go on without it")


class StoreReadiness:
    """The data dir takes a write now (a small probe file, written as every file is), and no
    store has had a write refused since its last success (`DiskHealth`)."""

    def __init__(self, data_dir: Path, disk: DiskHealth) -> None:
        self._probe = data_dir / PROBE_FILE
        self._disk = disk

    async def __call__(self) -> Health:
        try:  # a write's fsync may take a while on a busy disk: not on the event loop
            await asyncio.to_thread(write_atomic, self._probe, str(os.getpid()).encode())
        except OSError as exc:
            return Health(HealthState.DOWN, f"the data dir refuses writes ({describe(exc)})")
        refused = self._disk.refused()
        if refused:
            return Health(HealthState.DOWN, f"writes refused: {refused}")
        return Health(HealthState.OK, "writable")


DATABASE_LOOK_SECONDS = 2.0
"""Within the readiness check's own bound, so the reason is ours, not a time-out's."""


class DatabaseReadiness:
    """PostgreSQL (`DATABASE_URL`) answers a query now. While it does not, the process is not
    ready: turns still answer, but what they change waits in memory, so a balancer should send
    the traffic to a process that reaches the database."""

    def __init__(self, database: Database, look_seconds: float = DATABASE_LOOK_SECONDS) -> None:
        self._database = database
        self._look_seconds = look_seconds

    async def __call__(self) -> Health:
        try:
            async with asyncio.timeout(self._look_seconds):
                async with self._database.connection("readiness check", retry=True) as db:
                    await db.execute("SELECT 1")
        except TimeoutError:
            return Health(
                HealthState.DOWN, f"the database gave no answer in {self._look_seconds:g}s"
            )
        except DatabaseDown as exc:
            return Health(HealthState.DOWN, f"the database cannot be reached ({_cause(exc)})")
        return Health(HealthState.OK, "reachable")


def _cause(exc: DatabaseDown) -> str:
    """The driver's reason without where it connects (libpq names host and port first; the
    address is for `/status`, not for anyone who can reach the port)."""
    cause = exc.__cause__
    if cause is None:
        return "unreachable"
    lines = str(cause).strip().splitlines()
    return lines[0].rsplit(": ", 1)[-1] if lines else type(cause).__name__
