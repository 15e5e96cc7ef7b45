"""Guest mode (Bot API 10.0): summoned by a mention in a chat it is no member of, the bot
answers allowed users once, with `answerGuestQuery`, as in a group of its own: never with
anyone's private memory, never setting a reminder it could not deliver, never twice."""

from __future__ import annotations

import json
import logging

import pytest

from bot.adapters.telegram import WebhookOptions
from tests.e2e.test_telegram_bot import (  # noqa: F401
    ALICE,
    BOB,
    EVE,
    GROUP,
    handled_updates,
    memory_section,
    replies,
    saved_contents,
    sessions,
    start_bot,
)
from tests.fakes.background_server import free_port
from tests.fakes.openai_server import Reply
from tests.fakes.telegram_server import GUEST_QUERY_INVALID, Chat

ELSEWHERE = Chat.group(-100_777, "Book club")
"""A group the bot was never added to."""


@pytest.fixture
def start(start_bot):  # noqa: F811 - the Telegram tests' fixture, under a name of its own here
    """Starts the bot in Telegram, as `start_bot` in test_telegram_bot.py."""
    return start_bot


def summon(telegram, user, words: str, chat: Chat = ELSEWHERE) -> str:
    """`user` mentions the bot in `chat` with `words`; the guest query's id."""
    return telegram.summon_guest(user, f"@{telegram.bot.username} {words}", chat)


async def answers(telegram, count: int = 1) -> list:
    """The answers posted to guest queries, once there are `count`."""
    await telegram.wait_for(lambda: len(telegram.guest_answers()) >= count)
    return telegram.guest_answers()


async def all_handled(settings, count: int, telegram) -> None:
    """Wait until the inbox has finished `count` updates: all they were to do is done."""
    await telegram.wait_for(lambda: handled_updates(settings) >= count)


async def test_an_allowed_user_is_answered_once_in_one_message_as_a_guest(
    start, telegram, fake_llm, settings
):
    await start()
    query = summon(telegram, ALICE, "what is 2+2?")
    (answer,) = await answers(telegram)
    assert (answer.text, answer.chat_id, answer.guest_query_id) == (
        "echo: what is 2+2?",
        ELSEWHERE.id,
        query,
    )
    await all_handled(settings, 1, telegram)
    assert [c.status for c in telegram.calls("answerGuestQuery")] == [200], "one answer"
    for method in ("sendMessage", "sendMessageDraft", "editMessageText", "sendChatAction"):
        assert telegram.calls(method) == [], f"{method}: the bot is no member there"
    saved = await saved_contents(telegram, settings, f"telegram-guest:{ELSEWHERE.id}", 2)
    assert saved == ["what is 2+2?", "echo: what is 2+2?"]


async def test_a_stranger_summoning_the_bot_gets_nothing_and_only_their_id_is_logged(
    start, telegram, fake_llm, settings, caplog
):
    await start()
    with caplog.at_level(logging.DEBUG):
        summon(telegram, EVE, "my secret plans for today")
        await telegram.wait_for(lambda: "refused user 6666 as a guest" in caplog.text)
        summon(telegram, ALICE, "and me?")  # a later summons, answered: the first is long done
        await answers(telegram)
    assert [a.text for a in telegram.guest_answers()] == ["echo: and me?"]
    assert len(telegram.calls("answerGuestQuery")) == 1, "nothing posted for the stranger"
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == ["and me?"]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for private in ("secret plans", "Zorblax", "zorblax_stranger"):
        assert private not in logged, f"{private!r} was logged"
    inbox = (settings.data_dir / "telegram" / "inbox.jsonl").read_text()
    assert "secret plans" not in inbox, "a stranger's words never reach the disk"


async def test_a_private_fact_never_reaches_a_guest_answer_nor_a_guest_fact_private(
    start, telegram, fake_llm
):
    await start()
    telegram.send_text(ALICE, "my PIN is 4512")
    await replies(telegram, ALICE.id)
    telegram.send_text(ALICE, "what is my PIN?")
    await replies(telegram, ALICE.id, 2)
    assert "4512" in memory_section(fake_llm.system_prompts()[-1]), "recalled in private"

    summon(telegram, ALICE, "what is my PIN?")
    await answers(telegram)
    assert "4512" not in json.dumps(fake_llm.requests[-1]), "the whole chat reads the answer"

    summon(telegram, ALICE, "our book this month is Dune")
    await answers(telegram, 2)
    telegram.send_text(ALICE, "which book do we read this month?")
    await replies(telegram, ALICE.id, 3)
    assert "Dune" not in json.dumps(fake_llm.requests[-1]), "what the chat said stays there"


async def test_a_guest_chat_is_never_the_session_of_a_chat_of_the_same_id(
    start, telegram, fake_llm, settings
):
    """Telegram says a guest message's chat id may be that of another chat of the bot's."""
    await start()
    telegram.send_text(ALICE, f"@{telegram.bot.username} the code word is Heron", chat=GROUP)
    await replies(telegram, GROUP.id)
    summon(telegram, BOB, "what was the code word?", chat=GROUP)
    (answer,) = await answers(telegram)
    assert answer.text == "echo: what was the code word?"
    assert "Heron" not in json.dumps(fake_llm.requests[-1]), "not the group's history"
    await all_handled(settings, 2, telegram)
    assert {f"telegram:{GROUP.id}", f"telegram-guest:{GROUP.id}"} <= set(sessions(settings))


async def test_no_reminder_is_set_where_the_bot_is_a_guest(start, telegram, fake_llm, settings):
    await start()
    arguments = {"action": "add", "text": "call Olga", "in_minutes": 30}
    fake_llm.script(
        Reply(tool_calls=[("reminders", json.dumps(arguments))]),
        Reply(text="I can't set reminders here; ask me in private."),
    )
    summon(telegram, ALICE, "remind me in 30 minutes to call Olga")
    (answer,) = await answers(telegram)
    assert answer.text == "I can't set reminders here; ask me in private."
    tool_result = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "no reminder can be set here. I am a guest in this chat" in tool_result
    await all_handled(settings, 1, telegram)
    book = settings.data_dir / "reminders" / "reminders.json"
    assert "call Olga" not in (book.read_text() if book.exists() else "")


async def test_an_expired_query_is_logged_tried_once_and_the_turn_is_kept(
    start, telegram, fake_llm, settings, caplog
):
    await start()
    fake_llm.script(Reply(text="too late", delay=0.3))
    query = summon(telegram, ALICE, "a slow question")
    telegram.expire_guest_query(query)  # Telegram's time for an answer runs out meanwhile
    await all_handled(settings, 1, telegram)
    assert [c.status for c in telegram.calls("answerGuestQuery")] == [400], "tried once"
    assert telegram.guest_answers() == []
    said = GUEST_QUERY_INVALID.removeprefix("Bad Request: ").lower()  # PTB capitalises it
    assert f"answerguestquery to guest query {query} failed: {said}" in caplog.text.lower()
    saved = await saved_contents(telegram, settings, f"telegram-guest:{ELSEWHERE.id}", 2)
    assert saved == ["a slow question", "too late"], "the turn is kept all the same"
    telegram.send_text(ALICE, "still there?")
    assert (await replies(telegram, ALICE.id))[0].text == "echo: still there?"


async def test_a_redelivered_summons_is_not_answered_twice_even_after_a_restart(
    start, telegram, fake_llm, settings, caplog
):
    """The inbox drops a repeat it knows; one it does not (its journal lost in a restart)
    is known by its session, which kept the query's id with the answer."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook"
    webhook = WebhookOptions(url=url, listen="127.0.0.1", port=port, secret="s3cret_token")
    bot = await start(webhook=webhook)
    query = summon(telegram, ALICE, "answer me once")
    await answers(telegram)
    await all_handled(settings, 1, telegram)

    telegram.redeliver(telegram.guest_query(query).update_id)  # the webhook's 200 was lost
    summon(telegram, BOB, "and me")  # posted only once the repeat was taken: one at a time
    await answers(telegram, 2)
    await all_handled(settings, 2, telegram)
    assert len(telegram.calls("answerGuestQuery")) == 2 and len(fake_llm.requests) == 2

    await bot.stop()
    (settings.data_dir / "telegram" / "inbox.jsonl").unlink()  # lost: nothing known there
    await start(webhook=webhook)
    with caplog.at_level(logging.INFO):
        telegram.redeliver(telegram.guest_query(query).update_id)
        await all_handled(settings, 1, telegram)
    assert "was answered before a restart; skipped" in caplog.text, "its session knows it"
    assert len(telegram.calls("answerGuestQuery")) == 2, "not answered again"
    assert len(fake_llm.requests) == 2, "not run again"


async def test_memory_asked_as_a_guest_is_answered_in_private_with_a_pointer(start, telegram):
    await start()
    telegram.chat_exists(Chat.private_with(ALICE))  # she started a private chat long ago
    telegram.send_text(ALICE, "my PIN is 4512")
    await replies(telegram, ALICE.id)
    summon(telegram, ALICE, "/memory")
    (pointer,) = await answers(telegram)
    assert pointer.text == "I've sent you the answer to /memory in private."
    private = (await replies(telegram, ALICE.id, 2))[1].text
    assert private.startswith("You asked /memory in a group; the answer is for you alone")
    assert "4512" not in private, "the guest chat's memory, not hers"


async def test_an_answer_whose_connection_dropped_is_retried_but_never_posted_twice(
    start, telegram, fake_llm, settings
):
    """Telegram carried the first answer out, but the connection dropped before it said so:
    the retry is refused as a second answer, so the chat shows the answer once."""
    await start()
    telegram.fail("answerGuestQuery", status=200, hang_up=True)
    summon(telegram, ALICE, "answer me once")
    await all_handled(settings, 1, telegram)
    assert [a.text for a in telegram.guest_answers()] == ["echo: answer me once"]
    assert [c.status for c in telegram.calls("answerGuestQuery")] == [0, 400]
