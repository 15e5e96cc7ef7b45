"""What every usage ledger promises (`UsageRecords`, `bot/usage/ledger.py`): today's totals
per user and model, a new day from zero at midnight UTC, today read back after a restart.
The day files and PostgreSQL alike."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from bot.ports.llm import TokenUsage


async def test_calls_are_counted_per_user_and_model(new_usage_ledger):
    ledger = await new_usage_ledger()
    ledger.record("ann", "big", TokenUsage(10, 5))
    ledger.record("ann", "big", TokenUsage(1, 1))
    ledger.record("ann", "small", TokenUsage(2, 0))
    ledger.record("bob", "big", TokenUsage(100, 100))
    ann = await ledger.today("ann")
    assert ann["big"].calls == 2 and ann["big"].tokens == 17
    assert ann["big"].prompt_tokens == 11 and ann["big"].completion_tokens == 6
    assert ann["small"].tokens == 2
    assert (await ledger.today("carol")) == {}
    assert sorted(await ledger.today_all()) == ["ann", "bob"]
    assert (await ledger.today_all())["bob"]["big"].tokens == 200


async def test_a_new_day_starts_from_zero(new_usage_ledger):
    today = [date(2026, 1, 1)]
    ledger = await new_usage_ledger(lambda: today[0])
    ledger.record("ann", "m", TokenUsage(10, 5))
    today[0] = date(2026, 1, 2)
    assert (await ledger.today("ann")) == {} and (await ledger.today_all()) == {}
    ledger.record("ann", "m", TokenUsage(3, 3))
    assert (await ledger.today("ann"))["m"].tokens == 6


async def test_a_restart_reads_today_back_and_not_earlier_days(new_usage_ledger):
    today = [date(2026, 1, 1)]
    ledger = await new_usage_ledger(lambda: today[0])
    ledger.record("ann", "m", TokenUsage(50, 50))
    today[0] = date(2026, 1, 2)
    ledger.record("ann", "m", TokenUsage(3, 3))
    ledger.record("bob", "n", TokenUsage(1, 0))
    reread = await new_usage_ledger(lambda: today[0])
    assert (await reread.today("ann"))["m"].tokens == 6 and (await reread.today("ann"))[
        "m"
    ].calls == 1
    assert sorted(await reread.today_all()) == ["ann", "bob"]


async def test_many_calls_at_once_are_all_counted_after_a_restart(new_usage_ledger):
    ledger = await new_usage_ledger()

    async def call(n: int) -> None:
        await asyncio.sleep(0)
        ledger.record(f"user-{n % 7}", "m", TokenUsage(n, 1))

    await asyncio.gather(*(call(n) for n in range(300)))
    reread = await new_usage_ledger()
    everyone = await reread.today_all()
    assert sum(models["m"].calls for models in everyone.values()) == 300
    assert sum(models["m"].prompt_tokens for models in everyone.values()) == sum(range(300))


async def test_answers_cut_at_the_token_limit_are_counted_and_read_back(new_usage_ledger):
    ledger = await new_usage_ledger()
    ledger.record("ann", "m", TokenUsage(10, 100, cut=True))
    ledger.record("ann", "m", TokenUsage(10, 5))
    assert (await ledger.today("ann"))["m"].cut == 1
    reread = await new_usage_ledger()
    mine = (await reread.today("ann"))["m"]
    assert mine.cut == 1 and mine.calls == 2


async def test_usage_from_every_process_on_the_store_is_the_users(new_usage_ledger, request):
    """Three processes on one PostgreSQL database spend one budget: each counts its own calls
    at once, written or not, and the others' once written, never a row twice. A data dir has
    one process (`DataDirLock`), so the day files are read back only at a restart."""
    if request.node.callspec.params["new_usage_ledger"] == "files":
        pytest.skip("one process per data dir")
    processes = [await new_usage_ledger() for _ in range(3)]
    sizes = [1_000, 10_000, 100_000]  # a sum tells which rows it counted, and how often
    for ledger, size in zip(processes, sizes, strict=True):
        ledger.record("ann", "m", TokenUsage(size, 0))
    processes[0].record("bob", "m", TokenUsage(7, 0))
    for _ in range(20):  # while the writers run
        for ledger, size in zip(processes, sizes, strict=True):
            tokens = (await ledger.today("ann"))["m"].tokens
            counted = [tokens // other % 10 for other in sizes]
            assert set(counted) <= {0, 1} and tokens // size % 10 == 1, tokens
        await asyncio.sleep(0)
    for ledger in processes:
        await ledger.drain()
    for ledger in processes:
        assert (await ledger.today("ann"))["m"].tokens == 111_000
        assert (await ledger.today("ann"))["m"].calls == 3
    everyone = await processes[2].today_all()
    assert everyone["ann"]["m"].tokens == 111_000 and everyone["bob"]["m"].tokens == 7
