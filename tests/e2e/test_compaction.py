"""Long chats: older turns become a rolling summary written by the LLM (the OpenAI fake)."""

import json
import logging

import pytest

from bot.compaction import SUMMARISER_PROMPT
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply

pytestmark = pytest.mark.e2e

PADDING = "lorem ipsum dolor sit amet " * 4  # about 30 tokens a message


def is_summary_request(body: dict) -> bool:
    first = body["messages"][0]
    return first["role"] == "system" and first["content"].startswith(SUMMARISER_PROMPT[:40])


def summary_requests(fake_llm) -> list[dict]:
    return [body for body in fake_llm.requests if is_summary_request(body)]


def chat_requests(fake_llm) -> list[dict]:
    return [body for body in fake_llm.requests if not is_summary_request(body)]


def saved(settings) -> dict:
    (path,) = (settings.data_dir / "sessions").glob("*.json")
    return json.loads(path.read_text())


@pytest.fixture
def small_budget(settings):
    edit_runtime_config(settings.runtime_config_path, llm={"historyTokenBudget": 256})
    edit_runtime_config(settings.runtime_config_path, rateLimit={"messagesPerMinute": 1000})


async def test_older_turns_become_a_rolling_summary_the_prompt_carries(
    app, settings, fake_llm, small_budget
):
    fake_llm.script_for(
        is_summary_request,
        Reply(text="SUMMARY ONE: the user counted from 0."),
        then=Reply(text="SUMMARY TWO: the user counted on."),
    )
    channel = RecordingChannel()
    for n in range(12):
        await app.handle(say(ALICE, f"message number {n} {PADDING}"), channel)

    first, *later = summary_requests(fake_llm)
    assert "message number 0" in first["messages"][1]["content"], "the oldest turns were read"
    assert "Summary so far:\n(none yet)" in first["messages"][1]["content"]
    assert "Summary so far:\nSUMMARY ONE" in later[0]["messages"][1]["content"], "rolling"
    session = saved(settings)
    assert session["summary"] == "SUMMARY TWO: the user counted on."
    assert session["messages"][-1]["content"].startswith("echo: message number 11")
    assert all("message number 0 " not in m["content"] for m in session["messages"])
    prompt = chat_requests(fake_llm)[-1]["messages"]
    assert "SUMMARY TWO: the user counted on." in prompt[0]["content"]
    assert channel.texts()[-1].startswith("echo: message number 11"), "every turn answered"
    await app.handle(say(ALICE, "/status"), channel)
    assert "older ones summarised" in channel.texts()[-1]


async def test_a_failed_summary_drops_the_oldest_turns_with_one_log_line(
    app, settings, fake_llm, small_budget, caplog
):
    fake_llm.script_for(is_summary_request, then=Reply(status=500))
    channel = RecordingChannel()
    with caplog.at_level(logging.WARNING, logger="bot.compaction"):
        for n in range(6):
            await app.handle(say(ALICE, f"message number {n} {PADDING}"), channel)
    dropped = [r for r in caplog.records if "they were dropped" in r.getMessage()]
    assert len(dropped) == 1 and "HTTP 500" in dropped[0].getMessage()
    assert len(summary_requests(fake_llm)) == 2, "retried once, then given up"
    session = saved(settings)
    assert session["summary"] == ""
    assert session["messages"][0]["role"] == "user"
    assert "message number 0 " not in session["messages"][0]["content"]
    assert channel.texts()[-1].startswith("echo: message number 5")


async def test_compact_on_demand_keeps_the_last_exchange_and_loses_nothing_on_failure(
    app, settings, fake_llm
):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/compact"), channel)
    assert "nothing to compact" in channel.texts()[-1]
    for n in range(3):
        await app.handle(say(ALICE, f"fact number {n}"), channel)

    fake_llm.script_for(is_summary_request, Reply(status=400, error_message="bad model"))
    await app.handle(say(ALICE, "/compact"), channel)
    assert "couldn't summarise" in channel.texts()[-1]
    assert len(saved(settings)["messages"]) == 6, "nothing was dropped"

    fake_llm.script_for(is_summary_request, Reply(text="Facts 0 and 1 were given."))
    await app.handle(say(ALICE, "/compact"), channel)
    assert channel.texts()[-1].startswith("Compacted: 4 older messages")
    session = saved(settings)
    assert session["summary"] == "Facts 0 and 1 were given."
    assert [m["content"] for m in session["messages"]] == ["fact number 2", "echo: fact number 2"]


async def test_the_session_file_stays_bounded_however_long_the_chat(
    app, settings, fake_llm, small_budget
):
    """The summariser here repeats all it is given (the fake's echo): the summary is still
    cut at its bound, and the file stops growing."""
    channel = RecordingChannel()
    sizes = []
    for n in range(40):
        await app.handle(say(ALICE, f"message number {n} {PADDING}"), channel)
        (path,) = (settings.data_dir / "sessions").glob("*.json")
        sizes.append(path.stat().st_size)
    assert len(summary_requests(fake_llm)) >= 5
    limit = 600 * 4 * 2  # llm.summaryMaxTokens (default 600) × 8 characters
    assert len(saved(settings)["summary"]) <= limit
    assert max(sizes[20:]) < 2 * limit + 4_000, sizes
