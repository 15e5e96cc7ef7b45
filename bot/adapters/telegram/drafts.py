"""A reply shown while it is written as a draft (`sendMessageDraft`), then sent once.

In private chats Telegram shows a draft of the bot's reply that animates as it grows: no
message exists until the answer is done, so there are no edits to be flood-limited, and the
first words are shown as soon as they arrive (the edited preview waits a second, to spare an
edit). Later drafts go out at most once per interval; the finished answer is sent once, one
message per part. A draft lasts about 30 seconds unless renewed, so one that a failure leaves
behind goes away by itself; while no new words come (a long tool call), the same draft is
shown again every `keepalive_seconds`, so it neither fades nor lies stale.

The final message goes out only once no draft request is under way: a draft the server
carries out after the message would show the answer twice.

When the Bot API server refuses drafts (an older or self-hosted server lacks the method), the
stream carries on as an edited preview, and the channel asks for no more drafts.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.adapters.telegram.delivery import DraftsUnavailable, TelegramSender
from bot.adapters.telegram.formatting import render_markdown
from bot.adapters.telegram.splitting import MessagePart
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed, ReplyStream

log = logging.getLogger(__name__)

MAX_DRAFT_FAILURES = 3
"""Drafts stop after this many failures in a row; the final text is still sent."""
DRAFT_SETTLE_SECONDS = 6.0
"""How long the final message waits for a draft request under way (the request's own read
time-out is 5 s); past it the draft is abandoned and the message sent all the same."""


@dataclass(frozen=True)
class DraftPace:
    """How a draft follows the answer. `interval_seconds`: at most one draft per interval
    (the first at once). `keepalive_seconds`: the same draft shown again after this long
    without new words, before Telegram lets it fade (about 30 s). `placeholder_seconds`: with
    no words yet after this long (a slow model, a tool first), an empty draft, which Telegram
    shows as "Thinking…" (Bot API 10.0); None: none. A quick answer never shows it."""

    interval_seconds: float = 0.4
    keepalive_seconds: float = 20.0
    placeholder_seconds: float | None = 1.0


DEFAULT_PACE = DraftPace()


class TelegramDraftStream:
    """`ReplyStream` for private chats. `update` never raises; `finish` raises `DeliveryFailed`
    only when not even the first part of the answer could be sent."""

    def __init__(
        self,
        sender: TelegramSender,
        address: ChatAddress,
        fallback: Callable[[], ReplyStream],
        pace: DraftPace = DEFAULT_PACE,
        reply_to: int | None = None,
        on_final: Callable[[], None] = lambda: None,
        on_unavailable: Callable[[DraftsUnavailable], None] = lambda exc: None,
    ) -> None:
        """`fallback` makes the edited preview used once the server refuses drafts."""
        self._sender = sender
        self._address = address
        self._fallback = fallback
        self._interval = pace.interval_seconds
        self._keepalive = pace.keepalive_seconds
        self._reply_to = reply_to
        self._on_final = on_final
        self._on_unavailable = on_unavailable
        self._draft_id = random.randint(1, 2**31 - 1)  # same id: Telegram animates the change
        self._latest = ""
        self._drafted: str | None = None  # "": the placeholder is shown
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._in_flight = False
        self._edits: ReplyStream | None = None
        self._placeholder = _later(pace.placeholder_seconds, self._show_placeholder)

    async def update(self, text: str) -> None:
        if self._edits is not None:
            await self._edits.update(text)
            return
        if self._closed:
            return
        self._latest = text
        if self._task is None:
            self._task = asyncio.create_task(self._draft_loop(), name="telegram-draft")
        self._wake.set()

    def _show_placeholder(self) -> None:
        """No words yet: the loop starts with an empty draft ("Thinking…")."""
        if self._task is None and not self._closed and self._edits is None:
            self._task = asyncio.create_task(self._draft_loop(), name="telegram-draft")

    async def finish(self, text: str) -> None:
        self._closed = True
        if self._placeholder is not None:
            self._placeholder.cancel()
        if self._task is not None:
            await self._stop_drafting(self._task)
        if self._edits is not None:
            await self._edits.finish(text)
            return
        self._on_final()
        for index, part in enumerate(render_markdown(text)):
            try:
                reply_to = self._reply_to if index == 0 else None
                await self._sender.send(self._address, part, reply_to=reply_to)
            except DeliveryFailed:
                if index == 0:
                    raise  # nothing delivered: the reply guarantee tries again
                log.error(
                    "[Telegram] part %d of a reply to chat %s is lost",
                    index + 1,
                    self._address.chat_id,
                )

    async def _stop_drafting(self, task: asyncio.Task[None]) -> None:
        """End the draft loop: at once when it is idle, after its request when one is under
        way (bounded), so that no draft reaches Telegram after the message."""
        if not self._in_flight:
            task.cancel()
        self._wake.set()
        await asyncio.wait({task}, timeout=DRAFT_SETTLE_SECONDS)
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            log.error("[Telegram] drafts failed: %s", task.exception())  # never the answer

    async def _draft_loop(self) -> None:
        failures = 0
        while not self._closed:
            if self._latest == self._drafted:
                woken = await self._woken()
                if not woken and self._drafted is None:
                    continue  # no new words, and nothing shown yet to keep alive
            if self._closed:
                return
            self._in_flight = True
            try:
                failures = await self._draft(self._latest, failures)
            finally:
                self._in_flight = False
            if failures < 0 or failures >= MAX_DRAFT_FAILURES or self._closed:
                return
            await asyncio.sleep(max(self._interval, self._sender.paused_for(self._address)))

    async def _woken(self) -> bool:
        """Wait for new words; False when `keepalive_seconds` pass without any."""
        try:
            await asyncio.wait_for(self._wake.wait(), self._keepalive)
        except TimeoutError:
            return False
        self._wake.clear()
        return True

    async def _draft(self, text: str, failures: int) -> int:
        """Show `text` as the draft; the failures in a row after it (-1: drafts are over,
        the edited preview carries on)."""
        try:
            shown = render_markdown(text)[-1] if text else MessagePart("")
            await self._sender.draft(self._address, self._draft_id, shown)
            self._drafted = text
            return 0
        except DraftsUnavailable as exc:
            self._on_unavailable(exc)
            self._edits = self._fallback()
            await self._edits.update(self._latest)
            return -1
        except DeliveryFailed as exc:
            log.debug("[Telegram] draft failed (%d in a row): %s", failures + 1, exc)
            if failures + 1 >= MAX_DRAFT_FAILURES:
                log.warning("[Telegram] drafts stopped for chat %s", self._address.chat_id)
            return failures + 1


def _later(seconds: float | None, callback: Callable[[], None]) -> asyncio.TimerHandle | None:
    """`callback` after `seconds` on the running loop; None without either."""
    if seconds is None:
        return None
    try:
        return asyncio.get_running_loop().call_later(seconds, callback)
    except RuntimeError:  # made outside a loop (a test): no placeholder
        return None
