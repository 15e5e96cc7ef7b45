"""How long an item is kept, as the runtime config says now rather than as it was stored.

Episodes used to carry a TTL of their own (90 days by default), stored with each item (the
files' `ttl_days`, PostgreSQL's `expires_at`). Retention is by count now (`maxEpisodes`),
and `memory.episodicTtlDays` null means "no expiry": for the items already stored too, or
an upgrade would still drop a long life's older episodes on the date their old TTL set.
So a stored TTL counts only while the config sets one; with none, the stores clear it
(the files when they load a user, PostgreSQL once per process) and never delete by it.
"""

from __future__ import annotations

from datetime import datetime

from bot.config.model import MemoryConfig
from bot.memory.model import MemoryItem


def ttl_applies(config: MemoryConfig) -> bool:
    """Whether stored TTLs count: only while the config sets one (`episodicTtlDays`)."""
    return config.episodic_ttl_days is not None


def expired_by(item: MemoryItem, now: datetime, config: MemoryConfig) -> bool:
    """`item.expired(now)`, unless the config keeps episodes without expiry."""
    return ttl_applies(config) and item.expired(now)


def without_stored_ttl(item: MemoryItem) -> MemoryItem:
    """`item` kept until forgotten (the same object when it already is)."""
    if item.ttl_days is None:
        return item
    return item.model_copy(update={"ttl_days": None})
