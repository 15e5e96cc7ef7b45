"""Long polling that keeps every fetched update in the inbox before Telegram forgets it.

PTB's own `Updater` confirms a batch (asks for the next offset) as soon as it is queued, so
a crash loses whatever was queued behind a running turn. Here a batch goes to the inbox
(fsynced, or committed in PostgreSQL) first, and the inbox hands the new updates on; only the
next getUpdates confirms it. A batch the inbox could not journal (the database is away) is
fetched again after a back-off.

getUpdates is posted through PTB's request object itself (`BaseRequest.post`: the same errors,
`RetryAfter`, `Conflict`, `InvalidToken`, as `Bot.get_updates` raises), so the inbox journals
the JSON exactly as Telegram sent it and only new updates are parsed into `Update`s, instead
of every update being parsed and then serialised back for the journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from telegram import Bot
from telegram.error import InvalidToken, RetryAfter, TelegramError, TimedOut
from telegram.request import BaseRequest

from bot.adapters.telegram.ptb_compat import request_data
from bot.ports.inbox import TelegramInbox
from bot.retry import Backoff, retry_after_seconds

log = logging.getLogger(__name__)

POLLING_BACKOFF = Backoff(first_seconds=2.0, longest_seconds=30.0)
"""Rests between failed getUpdates while the Bot API is unreachable or failing."""


class JournaledPoller:
    """Fetches updates into the inbox, which hands them on; `start` and `stop` it."""

    def __init__(
        self,
        bot: Bot,
        inbox: TelegramInbox,
        timeout_seconds: float,
        allowed_updates: list[str],
        request: BaseRequest,
    ) -> None:
        """`request` is the bot's getUpdates request object (`get_updates_request`)."""
        self._bot = bot
        self._request = request
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
        """Polling needs no webhook set; then start fetching (the inbox is open already)."""
        await self._bot.delete_webhook()
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
                updates = await self._get_updates()
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
            if updates:
                try:
                    await self.inbox.take(updates)
                except Exception as exc:  # not journaled: fetched again, not confirmed
                    self.failures += 1
                    delay = POLLING_BACKOFF.after(self.failures)
                    log.warning(
                        "[Telegram] could not journal %d update(s) (%s); fetching them again "
                        "in %gs",
                        len(updates),
                        exc,
                        delay,
                    )
                    await asyncio.sleep(delay)
                    continue
            self.failures = 0

    async def _get_updates(self) -> list[dict[str, Any]]:
        """The next batch as the JSON Telegram sent (`Bot.get_updates`, unparsed)."""
        timeout = round(self._timeout)
        parameters = {
            "offset": self.inbox.last_update_id + 1,
            "timeout": timeout,
            "allowed_updates": self._allowed,
        }
        result = await self._request.post(
            f"{self._bot.base_url}/getUpdates",
            request_data(parameters),
            read_timeout=(self._request.read_timeout or 0.0) + timeout,
        )
        if not isinstance(result, list):
            return []
        return [u for u in result if isinstance(u, dict) and isinstance(u.get("update_id"), int)]
