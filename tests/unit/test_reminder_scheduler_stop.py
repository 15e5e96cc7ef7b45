"""A stop asked for while the scheduler's loop looks at the reminders for the first time ends
the loop, even when the look swallows the cancellation, as Python 3.11's `asyncio.wait_for`
does when the awaited answer arrives with it (psycopg_pool waits for a connection with it)."""

from __future__ import annotations

import asyncio

from bot.chat_locks import ChatLanes
from bot.reminders import ReminderBook
from bot.reminders.model import Reminder
from bot.reminders.scheduler import ReminderScheduler
from bot.storage.sessions import JsonSessionStore


class SwallowingBook(ReminderBook):
    """A book whose first look waits until it is cancelled, then answers as if it had not
    been: the cancellation is lost, as in the store on PostgreSQL under Python 3.11."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.looking = asyncio.Event()
        self._answer = asyncio.Event()  # never set: only a cancellation ends the wait

    async def soonest(self, limit: int) -> list[Reminder]:
        if self.looking.is_set():
            return await super().soonest(limit)
        self.looking.set()
        try:
            await self._answer.wait()
        except asyncio.CancelledError:
            pass  # the answer "arrived" with the cancellation: returned, the cancel lost
        return await super().soonest(limit)


async def test_a_stop_during_the_first_look_ends_the_loop_though_the_look_swallows_it(
    tmp_path, clock
):
    book = SwallowingBook(tmp_path / "reminders.json")
    scheduler = ReminderScheduler(book, JsonSessionStore(tmp_path / "sessions"), ChatLanes(), clock)
    await scheduler.start()
    await book.looking.wait()  # the loop's first look is under way

    stopping = asyncio.create_task(scheduler.stop())
    asleep = asyncio.create_task(scheduler.asleep.wait())
    done, _ = await asyncio.wait({stopping, asleep}, return_when=asyncio.FIRST_COMPLETED)
    try:
        assert stopping in done, "the loop went back to sleep instead of stopping"
        assert not scheduler.asleep.is_set()
    finally:
        asleep.cancel()
        if not stopping.done():  # before the fix: cancel the sleeping loop for good
            await scheduler.stop()
            stopping.cancel()
