"""Long polling that keeps every fetched update in the inbox before Telegram forgets it.

PTB's own `Updater` confirms a batch (asks for the next offset) as soon as it is queued, so
a crash loses whatever was queued behind a running turn. Here a batch goes to the inbox
(fsynced) first, then to PTB's update queue; only the next getUpdates confirms it. At start,
what the inbox still holds from before is queued ahead of anything new.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Bot
from telegram.error import InvalidToken, RetryAfter, TelegramError, TimedOut

from bot.adapters.telegram.inbox import UpdateInbox, keep_in, replay
from bot.retry import Backoff, retry_after_seconds

log = logging.getLogger(__name__)

POLLING_BACKOFF = Backoff(first_seconds=2.0, longest_seconds=30.0)
"""Rests between failed getUpdates while the Bot API is unreachable or failing."""


class JournaledPoller:
    """Fetches updates into PTB's queue through the inbox; `start` and `stop` it."""

    def __init__(
        self,
        bot: Bot,
        queue: asyncio.Queue[object],
        inbox: UpdateInbox,
        timeout_seconds: float,
        allowed_updates: list[str],
    ) -> None:
        self._bot = bot
        self._queue = queue
        self.inbox = inbox
        self._timeout = timeout_seconds
        self._allowed = allowed_updates
        self._task: asyncio.Task[None] | None = None
        self.failures = 0
        """getUpdates failures in a row (0 after any success): readiness reads it."""

    @property
    def polling(self) -> bool:
        """Started and still fetching (polling ends for good only on a revoked token)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Polling needs no webhook set; then replay the inbox and start fetching."""
        await self._bot.delete_webhook()
        replay(self.inbox, self._queue, self._bot)
        self._task = asyncio.create_task(self._poll(), name="telegram-polling")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _poll(self) -> None:
        while True:
            try:
                updates = await self._bot.get_updates(
                    offset=self.inbox.last_update_id + 1,
                    timeout=round(self._timeout),
                    allowed_updates=self._allowed,
                )
            except TimedOut:
                continue
            except RetryAfter as exc:
                await asyncio.sleep(retry_after_seconds(exc) or 0.0)
                continue
            except InvalidToken:
                log.error("[Telegram] the bot token was revoked; no more updates are fetched")
                return
            except Exception as exc:  # anything at all must not end polling for good
                self.failures += 1
                delay = POLLING_BACKOFF.after(self.failures)
                if isinstance(exc, TelegramError):
                    log.warning("[Telegram] getUpdates failed (%s); retrying in %gs", exc, delay)
                else:
                    log.exception("[Telegram] getUpdates failed unexpectedly: %s", exc)
                await asyncio.sleep(delay)
                continue
            self.failures = 0
            if updates:
                for update in await keep_in(self.inbox, list(updates)):
                    await self._queue.put(update)
