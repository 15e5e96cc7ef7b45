"""Readiness as `/readyz` reports it: one `Health` per part (LLM, LightRAG, Telegram, store)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum


class HealthState(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"
    """Working without it, by design (LightRAG down: turns go on without long-term recall)."""
    OFF = "off"
    """Turned off in the config: not a problem."""
    DOWN = "down"
    """The bot cannot do its job: the process is not ready."""


@dataclass(frozen=True)
class Health:
    """One part's state and a short reason an operator can act on (never a secret, user id
    or message text)."""

    state: HealthState
    detail: str = ""


HealthCheck = Callable[[], Awaitable[Health]]
"""Looks at one part now; bounded in time by the caller."""


class StoreDown(Exception):
    """A store could not be reached while the bot runs: what it was asked to keep may wait
    and be retried (the PostgreSQL stores raise it as `DatabaseDown`)."""
