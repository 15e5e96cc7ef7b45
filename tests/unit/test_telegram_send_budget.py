"""Telegram's message limits, kept before a 429: strict windows, in order, per group."""

from __future__ import annotations

import asyncio
import time

from bot.adapters.telegram.send_budget import MAX_IDLE_GROUPS, SendBudget, SendWindow


async def test_no_window_ever_holds_more_than_the_limit_and_order_is_kept():
    window = SendWindow(0.2)
    sent: list[tuple[int, float]] = []

    async def send(n: int) -> None:
        await window.take(3)
        sent.append((n, time.monotonic()))

    await asyncio.gather(*(send(n) for n in range(10)))
    assert [n for n, _ in sent] == list(range(10)), "waiters go in arrival order"
    times = [at for _, at in sent]
    assert all(later - earlier >= 0.2 for earlier, later in zip(times, times[3:], strict=False))


async def test_edits_drafts_and_chat_actions_pass_while_new_messages_wait():
    budget = SendBudget(lambda: (1, 0))
    await budget.spend("sendMessage", 5)
    waiting = asyncio.create_task(budget.spend("sendMessage", 6))
    for endpoint in ("editMessageText", "sendMessageDraft", "sendChatAction", "deleteMessage"):
        await budget.spend(endpoint, 6)
    assert not waiting.done(), "the second new message waits for the next second"
    await waiting


async def test_a_full_group_holds_up_only_that_group():
    budget = SendBudget(lambda: (100, 2), group_window_seconds=60)
    await budget.spend("sendMessage", -100)
    await budget.spend("sendVoice", -100)
    held = asyncio.create_task(budget.spend("sendMessage", -100))
    await budget.spend("sendMessage", -200)  # another group
    await budget.spend("sendMessage", 42)  # a private chat
    await budget.spend("sendMessage", "@channel")
    assert not held.done(), "the third message in a minute waits"
    held.cancel()


async def test_the_limits_are_read_on_every_send_and_zero_means_none():
    limits = [(1, 1)]
    budget = SendBudget(lambda: limits[0])
    await budget.spend("sendMessage", -1)
    limits[0] = (0, 0)
    for _ in range(50):  # would wait 50 seconds and 50 minutes under the first limits
        await budget.spend("sendMessage", -1)


async def test_idle_group_windows_are_dropped_so_their_count_stays_bounded():
    now = [0.0]
    budget = SendBudget(lambda: (0, 20), group_window_seconds=60, clock=lambda: now[0])
    for group in range(MAX_IDLE_GROUPS):
        await budget.spend("sendMessage", -group - 1)
    now[0] = 61.0  # every window is empty again
    await budget.spend("sendMessage", -999_999)
    assert budget.tracked_groups == 1
