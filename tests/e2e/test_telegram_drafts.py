"""Drafts (`sendMessageDraft`) through the emulated Bot API, one test per way peers' drafts
went wrong: the answer shown twice, duplicates after a dropped connection, a draft left
stale through a long tool call, right-to-left text, answers longer than one message."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.e2e.test_telegram_bot import ALICE, replies, start_bot, visible  # noqa: F401 - fixture
from tests.fakes.openai_server import Reply

STORY = " ".join(f"word{i}" for i in range(60))


@pytest.fixture
def bot(start_bot):  # noqa: F811 - the Telegram tests' fixture, under a name of its own here
    """Starts the bot in Telegram, as `start_bot` in test_telegram_bot.py."""
    return start_bot


def drafts_of(telegram, chat_id: int) -> list:
    return [d for d in telegram.drafts if d.chat_id == chat_id]


async def all_settled(telegram, method: str) -> None:
    """Every request of `method` that reached the server is finished with (answered, or
    hung up on): nothing of it can land later."""
    await telegram.wait_for(lambda: len(telegram.calls(method)) == telegram.arrivals(method))


async def test_a_draft_in_flight_never_lands_after_the_final_message(bot, telegram, fake_llm):
    await bot()
    telegram.fail("sendMessageDraft", status=200, delay=0.5, times=1000)  # a slow draft path
    fake_llm.script(Reply(text=STORY, chunk_delay=0.02))
    telegram.send_text(ALICE, "tell me a story")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text == STORY
    (sent,) = telegram.calls("sendMessage")
    await all_settled(telegram, "sendMessageDraft")
    assert all(d.at < sent.at for d in drafts_of(telegram, ALICE.id)), (
        "a draft shown after the message would show the answer twice"
    )


async def test_drafts_lost_to_a_dropped_connection_cost_nothing(bot, telegram, fake_llm):
    await bot()
    telegram.fail("sendMessageDraft", hang_up=True, times=2)
    fake_llm.script(Reply(text=STORY, chunk_delay=0.04))
    telegram.send_text(ALICE, "tell me a story")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text == STORY
    assert [c.status for c in telegram.calls("sendMessageDraft")][:2] == [0, 0]
    assert drafts_of(telegram, ALICE.id), "drafts went on after the drop"
    assert len(telegram.calls("sendMessage")) == 1


async def test_a_final_send_whose_connection_drops_unsent_is_sent_once(bot, telegram, fake_llm):
    await bot()
    telegram.fail("sendMessage", status=502, hang_up=True)  # dropped before it was carried out
    fake_llm.script(Reply(text="the one answer", chunk_delay=0.02))
    telegram.send_text(ALICE, "hi")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text == "the one answer"
    assert [c.status for c in telegram.calls("sendMessage")] == [0, 200]
    telegram.send_text(ALICE, "and again")
    assert [m.text for m in await replies(telegram, ALICE.id, 2)] == [
        "the one answer",
        "echo: and again",
    ]


async def test_a_long_tool_call_keeps_the_draft_alive(bot, telegram, fake_llm):
    await bot(draft_keepalive_seconds=0.5)
    calculation = ("calculator", json.dumps({"expression": "6*7"}))
    fake_llm.script(
        Reply(text="Let me work that out.", tool_calls=[calculation]),
        Reply(text="It is 42.", delay=3.0),  # the tool's answer takes the model a while
    )
    telegram.send_text(ALICE, "what is six times seven?")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text.endswith("It is 42.")
    drafts = drafts_of(telegram, ALICE.id)
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(drafts)]
    assert max(gaps) < 1.5, "the draft was renewed while the model was busy"


async def test_right_to_left_and_mixed_text_reach_telegram_unchanged(bot, telegram, fake_llm):
    await bot()
    answer = "שלום! مرحبا بك. The word **שלום** means peace; «مرحبا» means welcome. 123 ₪"
    fake_llm.script(Reply(text=answer, chunk_delay=0.02))
    telegram.send_text(ALICE, "say hello in Hebrew and Arabic")
    (message,) = await replies(telegram, ALICE.id)
    expected = answer.replace("**", "")
    assert message.text == expected, "no direction marks added, nothing reordered"
    assert message.entity_texts("bold") == ["שלום"]
    assert all(expected.startswith(d.text.rstrip("…")[:5]) for d in drafts_of(telegram, ALICE.id))
    assert len(telegram.calls("sendMessage")) == 1


async def test_an_answer_longer_than_one_message_is_drafted_then_sent_once_per_part(
    bot, telegram, fake_llm
):
    await bot()
    paragraphs = [f"Paragraph {n}. " + "lorem ipsum " * 60 for n in range(12)]
    answer = "\n\n".join(paragraphs)  # about 9,000 characters: three messages
    fake_llm.script(Reply(text=answer, chunk_delay=0.001))
    telegram.send_text(ALICE, "write a lot")
    await telegram.wait_for(lambda: "Paragraph 11." in "".join(telegram.texts(ALICE.id)))
    texts = telegram.texts(ALICE.id)
    assert len(texts) >= 3 and all(len(t) <= 4096 for t in texts)
    assert visible("".join(texts)) == visible(answer)
    assert len(telegram.calls("sendMessage")) == len(texts), "each part sent once"
    assert all(len(d.text) <= 4096 for d in drafts_of(telegram, ALICE.id))


async def test_a_slow_first_word_shows_thinking_and_a_quick_answer_does_not(
    bot, telegram, fake_llm
):
    await bot(draft_placeholder_seconds=0.5)
    fake_llm.script(Reply(text="Worth the wait.", delay=2.0), Reply(text="At once."))
    telegram.send_text(ALICE, "a hard question")
    (slow,) = await replies(telegram, ALICE.id)
    first = drafts_of(telegram, ALICE.id)[0]
    assert first.text == "", "an empty draft: Telegram shows 'Thinking…'"
    assert first.at < telegram.calls("sendMessage")[0].at
    assert slow.text == "Worth the wait."
    shown = len(drafts_of(telegram, ALICE.id))
    telegram.send_text(ALICE, "an easy one")
    await replies(telegram, ALICE.id, 2)
    assert all(d.text for d in drafts_of(telegram, ALICE.id)[shown:]), "no placeholder"
