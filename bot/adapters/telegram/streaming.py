"""A reply shown while it is written: one message edited about once a second.

The tool loop calls `update` with all of the answer so far, as often as tokens arrive; that
call only records the text and wakes a background task, so the LLM stream is never slowed by
Telegram. The task shows the newest text at most once per interval and never during a flood
wait Telegram asked for. An answer that outgrows one message continues in a second one.
`finish` renders the final text, edits what is shown into it, sends what is missing and
deletes what is left over.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.adapters.telegram.delivery import TelegramSender
from bot.adapters.telegram.formatting import render_markdown
from bot.adapters.telegram.splitting import MessagePart
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed

log = logging.getLogger(__name__)

MAX_PREVIEW_FAILURES = 3
"""Previews stop after this many failures in a row; the final text is still delivered."""


class TelegramReplyStream:
    """`ReplyStream` for Telegram. `update` never raises; `finish` raises only `DeliveryFailed`."""

    def __init__(
        self,
        sender: TelegramSender,
        address: ChatAddress,
        interval_seconds: float = 1.0,
        reply_to: int | None = None,
        on_final: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        on_preview: Callable[[list[int]], None] | None = None,
    ) -> None:
        """`on_preview` hears the ids of the messages shown while they are a preview, and []
        once the final text is in them."""
        self._sender = sender
        self._address = address
        self._interval = interval_seconds
        self._reply_to = reply_to
        self._on_final = on_final
        self._on_preview = on_preview
        self._clock = clock
        self._latest = ""
        self._previewed = ""
        self._shown: list[tuple[int, MessagePart]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._sending = False
        self._closed = False
        self._failures = 0
        self._next_at = 0.0

    async def update(self, text: str) -> None:
        if self._closed or self._failures >= MAX_PREVIEW_FAILURES:
            return
        self._latest = text
        if self._task is None:
            # The first preview waits one interval after the first words: an answer that is
            # complete by then costs a single message, not a message and an edit.
            self._next_at = self._clock() + self._interval
            self._task = asyncio.create_task(self._preview_loop(), name="telegram-stream")
        self._wake.set()

    async def finish(self, text: str) -> None:
        self._closed = True
        await self._stop_previews()
        self._on_final()
        try:
            await self._show(render_markdown(text), preview=False)
            self._tell_preview([])
        except DeliveryFailed:
            raise
        except Exception as exc:  # a bug here must not cost the reply guarantee
            log.exception("[Telegram] finishing the streamed reply failed")
            raise DeliveryFailed(f"streamed reply not finished: {exc}") from exc

    async def _preview_loop(self) -> None:
        while not self._closed:
            if self._latest == self._previewed:
                await self._wake.wait()
                self._wake.clear()
                continue
            delay = max(self._next_at - self._clock(), self._sender.paused_for(self._address))
            if delay > 0:
                await asyncio.sleep(delay)
            if self._closed:
                return
            text = self._latest
            self._sending = True
            try:
                await self._show(render_markdown(text), preview=True)
                self._tell_preview([message_id for message_id, _ in self._shown])
                self._previewed = text
                self._failures = 0
            except Exception as exc:
                self._failures += 1
                log.debug("[Telegram] preview failed (%d in a row): %s", self._failures, exc)
                if self._failures >= MAX_PREVIEW_FAILURES:
                    log.warning("[Telegram] previews stopped for chat %s", self._address.chat_id)
                    return
            finally:
                self._sending = False
            self._next_at = self._clock() + self._interval

    def _tell_preview(self, message_ids: list[int]) -> None:
        if self._on_preview is not None:
            try:
                self._on_preview(message_ids)
            except Exception as exc:  # only a replay's tidying depends on it
                log.warning("[Telegram] could not note a preview: %s", exc)

    async def _stop_previews(self) -> None:
        """End the preview task; one in the middle of a request is let finish, not torn off."""
        task = self._task
        if task is None:
            return
        self._wake.set()
        if not self._sending:
            task.cancel()
        await asyncio.wait({task})

    async def _show(self, parts: list[MessagePart], preview: bool) -> None:
        for index, part in enumerate(parts):
            if index < len(self._shown):
                message_id, shown = self._shown[index]
                if shown == part:
                    continue
                if await self._sender.edit(self._address, message_id, part, preview):
                    self._shown[index] = (message_id, part)
                    continue
                # The message is gone (deleted by the user): show the part anew.
                self._shown[index] = (await self._send(part, index, preview), part)
            else:
                self._shown.append((await self._send(part, index, preview), part))
        if not preview:
            for message_id, _ in self._shown[len(parts) :]:
                await self._sender.delete(self._address, message_id)
            del self._shown[len(parts) :]

    async def _send(self, part: MessagePart, index: int, preview: bool) -> int:
        reply_to = self._reply_to if index == 0 else None
        return await self._sender.send(self._address, part, reply_to=reply_to, preview=preview)
