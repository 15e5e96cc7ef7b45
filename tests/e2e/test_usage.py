"""Token usage per user per day, `/usage`, cost estimates and daily budgets, against the
OpenAI fake reporting usage the way OpenAI does (streamed: in the last chunk)."""

import asyncio
import json

import pytest

from bot.app import BotApp
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, BOB, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.e2e

PRICES = {"priced-model": {"inputPerMillion": 1000, "outputPerMillion": 2000}}


async def test_usage_is_counted_per_user_kept_on_disk_and_priced(app, settings, fake_llm):
    edit_runtime_config(settings.runtime_config_path, llm={"model": "priced-model"})
    edit_runtime_config(settings.runtime_config_path, usage={"prices": PRICES, "currency": "EUR"})
    fake_llm.script(
        Reply(text="one", usage=(100, 10)),
        Reply(text="two", usage=(200, 20)),
        Reply(text="hi", usage=(40, 4)),  # Bob's, below Alice's whatever the prompt's size
    )
    channel = RecordingChannel(streaming=True)
    await app.handle(say(ALICE, "first"), channel)
    await app.handle(say(ALICE, "second"), channel)
    await app.handle(say(ALICE, "/usage"), channel)
    mine = channel.texts()[-1]
    assert "Today (UTC): 330 tokens (300 in, 30 out) in 2 calls" in mine
    assert "about 0.3600 EUR" in mine  # 300 × 1000/M + 30 × 2000/M
    assert "All users" not in mine, "only operators see everyone"

    (day_file,) = (settings.data_dir / "usage").glob("*.jsonl")
    lines = [json.loads(line) for line in day_file.read_text().splitlines()]
    assert lines[0] == {"who": "user-alice", "model": "priced-model", "in": 100, "out": 10}
    assert day_file.stat().st_mode & 0o777 == 0o600

    fake_llm.script(Reply(text="hi", usage=(40, 4)))  # not estimated: tool schemas grow
    await app.handle(say(BOB, "hello"), channel)
    restarted = BotApp.build(settings)  # read back from today's file
    try:
        await restarted.handle(say(BOB, "/usage", operator=True), channel)
    finally:
        await restarted.aclose()
    everyone = channel.texts()[-1]
    assert "All users today (2)" in everyone
    assert "user-alice: 330 tokens" in everyone
    assert everyone.index("user-alice") < everyone.index("user-bob:"), "largest first"


async def test_at_the_daily_budget_the_bot_says_so_and_calls_no_llm(app, settings, fake_llm):
    edit_runtime_config(settings.runtime_config_path, usage={"dailyTokenBudget": 250})
    fake_llm.script(Reply(text="one", usage=(100, 50)), Reply(text="two", usage=(100, 50)))
    channel = RecordingChannel()
    await app.handle(say(ALICE, "first"), channel)
    await app.handle(say(ALICE, "second"), channel)  # 300 tokens now: past the budget
    calls = len(fake_llm.requests)
    await app.handle(say(ALICE, "third"), channel)
    assert "today's budget of 250 tokens" in channel.texts()[-1]
    assert len(fake_llm.requests) == calls, "no LLM call at the budget"
    await app.handle(say(BOB, "my own budget"), channel)
    assert channel.texts()[-1] == "echo: my own budget", "budgets are per user"
    await app.handle(say(ALICE, "/usage"), channel)
    assert "Daily budget: 300 of 250 tokens used" in channel.texts()[-1]


async def test_an_answer_stopped_half_way_is_counted_by_what_was_asked_and_shown(
    app, settings, fake_llm
):
    story = " ".join(f"word{i}" for i in range(200))
    fake_llm.script(Reply(text=story, chunk_delay=0.05, usage=(5000, 5000)))  # about 10 s
    channel = RecordingChannel(streaming=True)
    turn = asyncio.create_task(app.handle(say(ALICE, "tell me a long story"), channel))

    def shown() -> bool:
        return any("word3" in text for stream in channel.streams for text in stream.updates)

    await wait_until(shown, what="the story streaming")
    await app.handle(say(ALICE, "/stop"), channel)
    await turn
    await wait_until(lambda: fake_llm.hang_ups == 1, what="the stream closed")
    (day_file,) = (settings.data_dir / "usage").glob("*.jsonl")
    (line,) = [json.loads(line) for line in day_file.read_text().splitlines()]
    assert line["who"] == "user-alice"
    assert 0 < line["out"] < len(story) // 4, "counted by the part that streamed"
    assert line["in"] > 0


async def test_an_answer_cut_at_the_token_limit_ends_with_a_note_and_usage_counts_it(app, fake_llm):
    fake_llm.script(Reply(text="The first half of", finish_reason="length"))
    channel = RecordingChannel()
    await app.handle(say(ALICE, "tell me everything"), channel)
    assert channel.texts()[-1].startswith("The first half of\n\n[The answer stopped here")
    await app.handle(say(ALICE, "/usage"), channel)
    assert "1 answer stopped at the model's output token limit" in channel.texts()[-1]


async def test_without_prices_usage_says_which_setting_gives_a_cost(app, settings, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/usage"), channel)  # nothing used yet: the current model
    assert "No cost is shown for gpt-4o-mini" in channel.texts()[-1]
    await app.handle(say(ALICE, "hello"), channel)
    await app.handle(say(ALICE, "/usage"), channel)
    shown = channel.texts()[-1]
    assert "usage.prices" in shown and "about" not in shown

    edit_runtime_config(settings.runtime_config_path, usage={"prices": {"gpt-4o-mini": {}}})
    await app.handle(say(ALICE, "/usage"), channel)
    assert "usage.prices" not in channel.texts()[-1], "priced: nothing to explain"
