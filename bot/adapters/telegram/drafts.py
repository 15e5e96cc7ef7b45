"""A reply shown while it is written as a draft (`sendMessageDraft`), then sent once.

In private chats Telegram shows a draft of the bot's reply that animates as it grows: no
message exists until the answer is done, so there are no edits to be flood-limited, and the
first words are shown as soon as they arrive (the edited preview waits a second, to spare an
edit). Later drafts go out at most once per interval; the finished answer is sent once, one
message per part. A draft lasts about 30 seconds unless renewed, so one that a failure leaves
behind goes away by itself.

When the Bot API server refuses drafts (an older or self-hosted server lacks the method), the
stream carries on as an edited preview, and the channel asks for no more drafts.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

from bot.adapters.telegram.delivery import DraftsUnavailable, TelegramSender
from bot.adapters.telegram.formatting import render_markdown
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed, ReplyStream

log = logging.getLogger(__name__)

MAX_DRAFT_FAILURES = 3
"""Drafts stop after this many failures in a row; the final text is still sent."""


class TelegramDraftStream:
    """`ReplyStream` for private chats. `update` never raises; `finish` raises `DeliveryFailed`
    only when not even the first part of the answer could be sent."""

    def __init__(
        self,
        sender: TelegramSender,
        address: ChatAddress,
        fallback: Callable[[], ReplyStream],
        interval_seconds: float = 0.4,
        reply_to: int | None = None,
        on_final: Callable[[], None] = lambda: None,
        on_unavailable: Callable[[DraftsUnavailable], None] = lambda exc: None,
    ) -> None:
        """`fallback` makes the edited preview used once the server refuses drafts."""
        self._sender = sender
        self._address = address
        self._fallback = fallback
        self._interval = interval_seconds
        self._reply_to = reply_to
        self._on_final = on_final
        self._on_unavailable = on_unavailable
        self._draft_id = random.randint(1, 2**31 - 1)  # same id: Telegram animates the change
        self._latest = ""
        self._drafted = ""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._edits: ReplyStream | None = None

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

    async def finish(self, text: str) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})  # a bug in the drafts must not cost the answer
            if not self._task.cancelled() and self._task.exception() is not None:
                log.error("[Telegram] drafts failed: %s", self._task.exception())
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

    async def _draft_loop(self) -> None:
        failures = 0
        while not self._closed:
            if self._latest == self._drafted:
                await self._wake.wait()
                self._wake.clear()
                continue
            text = self._latest
            try:
                await self._sender.draft(self._address, self._draft_id, render_markdown(text)[-1])
                self._drafted, failures = text, 0
            except DraftsUnavailable as exc:
                self._on_unavailable(exc)
                self._edits = self._fallback()
                await self._edits.update(self._latest)
                return
            except DeliveryFailed as exc:
                failures += 1
                log.debug("[Telegram] draft failed (%d in a row): %s", failures, exc)
                if failures >= MAX_DRAFT_FAILURES:
                    log.warning("[Telegram] drafts stopped for chat %s", self._address.chat_id)
                    return
            await asyncio.sleep(max(self._interval, self._sender.paused_for(self._address)))
