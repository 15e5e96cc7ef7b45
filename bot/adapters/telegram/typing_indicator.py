"""'typing…' in a chat while its turn runs, once the answer takes noticeable time.

Telegram shows the action for ~5 s, so it is refreshed. It is sent only when no reply has gone
out within `delay_seconds`: the Bot API recommends chat actions only "when a response from the
bot will take a noticeable amount of time to arrive", and a reply (or its draft) that shows
sooner makes it a request nobody sees, the one a quick answer would otherwise cost on top of
its sendMessage.
"""

from __future__ import annotations

import asyncio
import contextlib

from bot.adapters.telegram.delivery import TelegramSender
from bot.conversation import ChatAddress


class TypingIndicators:
    """Per chat: a timer until the first "typing…", then one refresh loop, both ended when the
    reply goes out or the turn ends.

    A stop never tears off a request in flight (that would cost a pooled connection); the loop
    ends after it instead.
    """

    def __init__(
        self, sender: TelegramSender, interval_seconds: float = 4.0, delay_seconds: float = 0.5
    ) -> None:
        self._sender = sender
        self._interval = interval_seconds
        self._delay = delay_seconds
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._loops: set[asyncio.Task[None]] = set()  # referenced until done, as asyncio asks

    def start(self, address: ChatAddress) -> None:
        key = address.session_key
        if key not in self._timers and key not in self._stops:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(self._delay, self._begin, address)

    def stop(self, address: ChatAddress) -> None:
        key = address.session_key
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()  # answered before it was noticeable: nothing was sent
        stop = self._stops.pop(key, None)
        if stop is not None:
            stop.set()

    def _begin(self, address: ChatAddress) -> None:
        key = address.session_key
        del self._timers[key]
        self._stops[key] = stop = asyncio.Event()
        loop = asyncio.create_task(self._refresh(address, stop), name=f"typing:{key}")
        self._loops.add(loop)
        loop.add_done_callback(self._loops.discard)

    async def _refresh(self, address: ChatAddress, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._sender.typing(address)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._interval)
