"""`Lifecycle`: the app's parts start in the order they were added and stop in reverse, every
stop runs even after a start that failed half-way, and one failing stop stops no other."""

import asyncio

import pytest

from bot.lifecycle import Lifecycle
from tests.fakes.waiting import wait_until


class Journal:
    def __init__(self) -> None:
        self.events: list[str] = []

    def hook(self, event: str, fail: bool = False):
        async def run() -> None:
            self.events.append(event)
            if fail:
                raise RuntimeError(event)

        return run


async def test_parts_start_in_order_and_stop_in_reverse():
    journal, lifecycle = Journal(), Lifecycle()
    lifecycle.add(journal.hook("open stores"), journal.hook("close stores"))
    lifecycle.add(stop=journal.hook("drain memory"))
    lifecycle.add(journal.hook("start reminders"), journal.hook("stop reminders"))

    await lifecycle.start()
    await lifecycle.aclose()

    assert journal.events == [
        "open stores",
        "start reminders",
        "stop reminders",
        "drain memory",
        "close stores",
    ]


async def test_a_start_that_fails_half_way_still_closes_every_part():
    journal, lifecycle = Journal(), Lifecycle()
    lifecycle.add(journal.hook("open stores", fail=True), journal.hook("close stores"))
    lifecycle.add(journal.hook("start reminders"), journal.hook("stop reminders"))

    with pytest.raises(RuntimeError, match="open stores"):
        await lifecycle.start()
    await lifecycle.aclose()

    assert journal.events == ["open stores", "stop reminders", "close stores"]


async def test_a_stop_that_fails_does_not_keep_the_others_from_running():
    journal, lifecycle = Journal(), Lifecycle()
    lifecycle.add(stop=journal.hook("close stores"))
    lifecycle.add(stop=journal.hook("stop listener", fail=True))
    lifecycle.add(stop=journal.hook("stop reminders"))

    with pytest.raises(RuntimeError, match="stop listener"):
        await lifecycle.aclose()

    assert journal.events == ["stop reminders", "stop listener", "close stores"]


async def test_a_background_task_is_cancelled_at_stop_then_its_follow_up_runs():
    journal, lifecycle = Journal(), Lifecycle()
    started = []

    async def work() -> None:
        started.append(True)
        try:
            await asyncio.Event().wait()
        finally:
            journal.events.append("work cancelled")

    lifecycle.add_task("work", work, then=journal.hook("last retry"))
    await lifecycle.start()
    await wait_until(lambda: bool(started), 5, "the task ran")
    await lifecycle.aclose()

    assert journal.events == ["work cancelled", "last retry"]
