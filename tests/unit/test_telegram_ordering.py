"""Per-chat order and cross-chat concurrency of update processing; flood waits per chat."""

import asyncio
import datetime as dtm
import random
import time

import pytest
from telegram.error import RetryAfter

from bot.adapters.telegram.flood_control import FloodControl
from bot.adapters.telegram.ordering import ChatOrderedProcessor
from tests.fakes.waiting import wait_until


class FakeUpdate:
    def __init__(self, chat: str, number: int) -> None:
        self.chat = chat
        self.number = number


def processor(limit: int = 1024) -> ChatOrderedProcessor:
    return ChatOrderedProcessor(limit, key_of=lambda update: update.chat)


async def test_updates_of_one_chat_run_in_arrival_order_one_at_a_time():
    runs: dict[str, list[int]] = {}
    active: dict[str, int] = {}
    rng = random.Random(7)

    async def handle(update: FakeUpdate) -> None:
        active[update.chat] = active.get(update.chat, 0) + 1
        assert active[update.chat] == 1, "two updates of one chat ran at once"
        runs.setdefault(update.chat, []).append(update.number)
        await asyncio.sleep(rng.uniform(0, 0.01))
        active[update.chat] -= 1

    ordered = processor(limit=3)  # fewer slots than updates: the FIFO semaphore is exercised
    updates = [FakeUpdate(f"chat{i % 4}", i) for i in range(60)]
    # As PTB does: one task per update, created in arrival order.
    await asyncio.gather(*(ordered.process_update(u, handle(u)) for u in updates))
    for chat, numbers in runs.items():
        assert numbers == sorted(numbers), f"{chat} out of order: {numbers}"
    assert sum(len(n) for n in runs.values()) == 60


async def test_a_slow_chat_does_not_hold_up_another():
    finished: list[str] = []

    async def handle(update: FakeUpdate, seconds: float) -> None:
        await asyncio.sleep(seconds)
        finished.append(f"{update.chat}{update.number}")

    ordered = processor()
    slow, fast = FakeUpdate("a", 1), FakeUpdate("b", 1)
    started = time.monotonic()
    await asyncio.gather(
        ordered.process_update(slow, handle(slow, 0.5)),
        ordered.process_update(fast, handle(fast, 0.0)),
    )
    assert finished == ["b1", "a1"]
    assert time.monotonic() - started < 1.5


async def test_cancel_all_ends_running_and_queued_updates_without_leaks():
    ordered = processor()
    gate = asyncio.Event()

    async def handle() -> None:
        await gate.wait()

    tasks = [
        asyncio.create_task(ordered.process_update(FakeUpdate("a", i), handle())) for i in range(3)
    ]
    await wait_until(lambda: ordered.in_progress == 3)
    assert ordered.cancel_all() == 3
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    assert ordered.in_progress == 0


class FlakyCallback:
    """Answers 429 the first `floods` times, then succeeds; remembers when it was called."""

    def __init__(self, floods: int, seconds: float) -> None:
        self.floods = floods
        self.seconds = seconds
        self.calls: list[float] = []

    async def __call__(self) -> bool:
        self.calls.append(time.monotonic())
        if len(self.calls) <= self.floods:
            raise RetryAfter(dtm.timedelta(seconds=self.seconds))
        return True


async def request(limiter: FloodControl, callback, chat: int, rate_limit_args=None):
    return await limiter.process_request(
        callback, (), {}, "sendMessage", {"chat_id": chat}, rate_limit_args
    )


async def test_flood_wait_is_honoured_exactly_then_retried():
    limiter = FloodControl()
    callback = FlakyCallback(floods=1, seconds=0.4)
    assert await request(limiter, callback, chat=1) is True
    waited = callback.calls[1] - callback.calls[0]
    assert 0.4 <= waited < 0.8


async def test_flood_wait_pauses_only_the_chat_concerned():
    limiter = FloodControl()
    await request(limiter, FlakyCallback(floods=0, seconds=0), chat=1)
    flooding = FlakyCallback(floods=1, seconds=0.6)
    flooded = asyncio.create_task(request(limiter, flooding, chat=1))
    await wait_until(lambda: len(flooding.calls) == 1, what="the 429 has come")
    other = FlakyCallback(floods=0, seconds=0)
    started = time.monotonic()
    await request(limiter, other, chat=2)
    assert other.calls[0] - started < 0.3, "another chat is not paused"
    same = FlakyCallback(floods=0, seconds=0)
    await request(limiter, same, chat=1)
    assert same.calls[0] - started >= 0.5, "the flooded chat waits out its pause"
    await flooded


async def test_no_retry_when_asked_or_when_the_wait_is_too_long():
    limiter = FloodControl(max_wait_seconds=5)
    with pytest.raises(RetryAfter):
        await request(limiter, FlakyCallback(floods=1, seconds=0.2), chat=1, rate_limit_args=0)
    assert limiter.paused_for(1) > 0.1, "the pause is remembered for the next request"
    long_wait = FlakyCallback(floods=1, seconds=30)
    with pytest.raises(RetryAfter):
        await request(limiter, long_wait, chat=3)
    assert len(long_wait.calls) == 1
