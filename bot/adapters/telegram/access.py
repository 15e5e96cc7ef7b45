"""Who may talk to the bot, and how fast: the allowlist and the per-user rate limit.

Both read the runtime config passed in per message, so an edit of `telegram.allowedUsers` or
`rateLimit.messagesPerMinute` applies to the next message. A stranger is told once per
cooldown, with their own user id so the owner can add it; nothing else about them is kept.
The rate limit counts the messages a user sent in the last minute by Telegram's own send time,
so a backlog from a slow chat cannot push a user over or under it.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from bot.config import RuntimeConfig

WINDOW_SECONDS = 60.0
MAX_TRACKED_USERS = 10_000
"""Bounds the memory a flood of distinct strangers or users can take."""


class Verdict(Enum):
    ALLOW = "allow"
    REFUSE = "refuse"
    """Not on the allowlist: say so (with the user's id)."""
    REFUSE_QUIETLY = "refuse quietly"
    """Not on the allowlist and told recently: say nothing."""
    SLOW_DOWN = "slow down"
    """Over the rate limit: say when to try again."""
    SLOW_DOWN_QUIETLY = "slow down quietly"
    """Over the rate limit and already told until when."""


@dataclass(frozen=True)
class Admission:
    verdict: Verdict
    retry_in_seconds: int = 0
    limit_per_minute: int = 0


class AccessGate:
    """Decides, per message, whether it reaches the bot."""

    def __init__(
        self,
        refusal_cooldown_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._refusal_cooldown = refusal_cooldown_seconds
        self._clock = clock
        self._wall_clock = wall_clock
        self._refused_at: OrderedDict[int, float] = OrderedDict()
        self._accepted: OrderedDict[int, deque[float]] = OrderedDict()
        self._told_until: dict[int, float] = {}

    def admit(self, user_id: int, sent_at: float, config: RuntimeConfig) -> Admission:
        """`sent_at` is Telegram's send time of the message, in epoch seconds."""
        if user_id not in config.telegram.allowed_users:
            return Admission(self._refusal(user_id))
        return self._rate(user_id, sent_at, config.rate_limit.messages_per_minute)

    def _refusal(self, user_id: int) -> Verdict:
        now = self._clock()
        last = self._refused_at.get(user_id)
        if last is not None and now - last < self._refusal_cooldown:
            return Verdict.REFUSE_QUIETLY
        _remember(self._refused_at, user_id, now)
        return Verdict.REFUSE

    def _rate(self, user_id: int, sent_at: float, limit: int) -> Admission:
        window = self._accepted.get(user_id) or deque()
        while window and window[0] <= sent_at - WINDOW_SECONDS:
            window.popleft()
        if len(window) < limit:
            window.append(sent_at)
            _remember(self._accepted, user_id, window)
            self._told_until.pop(user_id, None)
            return Admission(Verdict.ALLOW)
        free_at = window[0] + WINDOW_SECONDS
        retry_in = max(1, math.ceil(free_at - self._wall_clock()))
        if self._told_until.get(user_id, 0.0) >= free_at:
            return Admission(Verdict.SLOW_DOWN_QUIETLY, retry_in, limit)
        self._told_until[user_id] = free_at
        return Admission(Verdict.SLOW_DOWN, retry_in, limit)


def _remember(table: OrderedDict, key: int, value: object) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > MAX_TRACKED_USERS:
        table.popitem(last=False)
