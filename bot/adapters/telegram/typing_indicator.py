"""'typing…' in a chat while its turn runs: Telegram shows it for ~5 s, so it is refreshed."""

from __future__ import annotations

import asyncio
import contextlib

from bot.adapters.telegram.delivery import TelegramSender
from bot.conversation import ChatAddress


class TypingIndicators:
    """One refresh loop per chat; stopped as soon as the reply goes out or the turn ends."""

    def __init__(self, sender: TelegramSender, interval_seconds: float = 4.0) -> None:
        self._sender = sender
        self._interval = interval_seconds
        self._loops: dict[str, asyncio.Task[None]] = {}

    def start(self, address: ChatAddress) -> None:
        key = address.session_key
        if key not in self._loops:
            self._loops[key] = asyncio.create_task(self._refresh(address), name=f"typing:{key}")

    def stop(self, address: ChatAddress) -> None:
        loop = self._loops.pop(address.session_key, None)
        if loop is not None:
            loop.cancel()

    def active(self, address: ChatAddress) -> bool:
        return address.session_key in self._loops

    async def _refresh(self, address: ChatAddress) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await self._sender.typing(address)
                await asyncio.sleep(self._interval)
