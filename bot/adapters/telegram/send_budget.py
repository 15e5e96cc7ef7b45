"""Telegram's message limits kept before its 429s come: about 30 new messages a second for
the whole bot, and 20 a minute in any one group.

A burst of answers or reminders to many chats is exactly what meets them; waiting a moment
here is cheaper than a flood wait that pauses a chat for many seconds. Only new messages
count (`send*`): edits, drafts and chat actions are per-chat paced elsewhere.

The windows are strict (never more than the limit in any window of its length). PTB's
`AIORateLimiter` uses aiolimiter's leaky bucket, which lets a full bucket out at once and
then refills it, so up to twice the limit can fall in the first window.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

UNCOUNTED = frozenset({"sendChatAction", "sendMessageDraft"})
"""Requests named `send*` that post no new message."""
MAX_IDLE_GROUPS = 256
"""Group windows kept before the idle ones are dropped: the count stays bounded."""


def is_new_message(endpoint: str) -> bool:
    """Posts a message: a `send*` request, or the answer to a guest query (posted in a chat
    whose id the request does not carry, so it counts bot-wide only)."""
    if endpoint == "answerGuestQuery":
        return True
    return endpoint.startswith("send") and endpoint not in UNCOUNTED


def is_group(chat_id: object) -> bool:
    """Groups and channels have negative ids (or an @username); private chats positive."""
    return str(chat_id).startswith(("-", "@"))


class SendWindow:
    """At most `limit` sends in any `seconds`-long window; waiters go in arrival order (an
    asyncio lock is FIFO), so a chat's messages keep their order."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._clock = clock
        self._sent: deque[float] = deque()
        self._turn = asyncio.Lock()

    async def take(self, limit: int) -> None:
        """Wait until one more send fits in the window, and count it."""
        async with self._turn:
            while True:
                now = self._clock()
                self._forget_before(now - self._seconds)
                if len(self._sent) < limit:
                    break
                await asyncio.sleep(self._sent[0] + self._seconds - now)
            self._sent.append(self._clock())

    def idle(self) -> bool:
        """Nothing counted in the window and nobody waiting: safe to drop."""
        self._forget_before(self._clock() - self._seconds)
        return not self._sent and not self._turn.locked()

    def _forget_before(self, start: float) -> None:
        while self._sent and self._sent[0] <= start:
            self._sent.popleft()


class SendBudget:
    """The bot-wide window and one per group, read with the limits in force (0: no limit)."""

    def __init__(
        self,
        limits: Callable[[], tuple[int, int]],
        group_window_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`limits`: (new messages a second for the bot, new messages a group may get in
        `group_window_seconds`), read on every send so runtime config edits apply."""
        self._limits = limits
        self._clock = clock
        self._group_window_seconds = group_window_seconds
        self._overall = SendWindow(1.0, clock)
        self._groups: dict[str, SendWindow] = {}

    async def spend(self, endpoint: str, chat_id: object) -> None:
        """Wait, if need be, until a request to `endpoint` for `chat_id` fits the limits."""
        if not is_new_message(endpoint):
            return
        per_second, per_group = self._limits()
        if per_group > 0 and chat_id is not None and is_group(chat_id):
            await self._group(str(chat_id)).take(per_group)  # before the bot-wide turn
        if per_second > 0:
            await self._overall.take(per_second)

    @property
    def tracked_groups(self) -> int:
        """Groups with a window kept now (bounded by dropping idle ones)."""
        return len(self._groups)

    def _group(self, chat_id: str) -> SendWindow:
        window = self._groups.get(chat_id)
        if window is None:
            if len(self._groups) >= MAX_IDLE_GROUPS:
                self._groups = {k: w for k, w in self._groups.items() if not w.idle()}
            window = self._groups[chat_id] = SendWindow(self._group_window_seconds, self._clock)
        return window
