"""'typing…' in a chat while its turn runs: Telegram shows it for ~5 s, so it is refreshed."""

from __future__ import annotations

import asyncio
import contextlib

from bot.adapters.telegram.delivery import TelegramSender
from bot.conversation import ChatAddress


class TypingIndicators:
    """One refresh loop per chat, stopped when the reply goes out or the turn ends.

    A stop never tears off a request in flight (that would cost a pooled connection); the loop
    ends after it instead.
    """

    def __init__(self, sender: TelegramSender, interval_seconds: float = 4.0) -> None:
        self._sender = sender
        self._interval = interval_seconds
        self._stops: dict[str, asyncio.Event] = {}
        self._loops: set[asyncio.Task[None]] = set()  # referenced until done, as asyncio asks

    def start(self, address: ChatAddress) -> None:
        key = address.session_key
        if key not in self._stops:
            self._stops[key] = stop = asyncio.Event()
            loop = asyncio.create_task(self._refresh(address, stop), name=f"typing:{key}")
            self._loops.add(loop)
            loop.add_done_callback(self._loops.discard)

    def stop(self, address: ChatAddress) -> None:
        stop = self._stops.pop(address.session_key, None)
        if stop is not None:
            stop.set()

    async def _refresh(self, address: ChatAddress, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._sender.typing(address)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._interval)
