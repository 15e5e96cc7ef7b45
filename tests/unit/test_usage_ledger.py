"""The usage ledger: today's totals, a new day at midnight UTC, lines cut by a crash."""

from datetime import date

from bot.ports.llm import TokenUsage
from bot.usage.ledger import UsageLedger


async def test_a_new_day_starts_from_zero_and_a_restart_reads_today_back(tmp_path):
    today = [date(2026, 1, 1)]
    ledger = UsageLedger(tmp_path, today=lambda: today[0])
    ledger.record("ann", "m", TokenUsage(10, 5))
    ledger.record("ann", "m", TokenUsage(1, 1))
    assert (await ledger.today("ann"))["m"].tokens == 17 and (await ledger.today("ann"))[
        "m"
    ].calls == 2
    today[0] = date(2026, 1, 2)
    assert (await ledger.today("ann")) == {}
    ledger.record("ann", "m", TokenUsage(3, 3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-01-01.jsonl", "2026-01-02.jsonl"]

    with (tmp_path / "2026-01-02.jsonl").open("a") as file:
        file.write('{"who": "ann", "model": "m", "in": 4')  # a line cut by a crash
    reread = UsageLedger(tmp_path, today=lambda: today[0])
    assert (await reread.today("ann"))["m"].tokens == 6
    assert list(await reread.today_all()) == ["ann"]
