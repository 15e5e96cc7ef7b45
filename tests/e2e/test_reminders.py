"""Reminders end to end: the scripted LLM sets one through the tool, the real PTB Application
delivers it through the emulated Bot API when a hand-moved clock reaches its time."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from bot.adapters.telegram import TelegramOptions
from bot.app import BotApp
from bot.reminders.model import Reminder
from tests.conftest import edit_runtime_config
from tests.e2e.test_telegram_bot import (
    ALICE,
    BOB,
    EVE,
    FAST,
    most_in_any_window,
    replies,
    sent_times,
)
from tests.fakes.clock import FakeClock
from tests.fakes.openai_server import EchoResponder, Reply
from tests.fakes.telegram_server import Chat, User

FORUM = Chat.group(-100_777, "Team", forum=True)
WEEKLY = "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0"


@pytest.fixture
async def reminding_bot(settings, telegram, fake_llm):
    """The bot in Telegram with reminders on a clock at Sun 1 Mar 2026 12:00 UTC, users in
    Berlin by default."""
    clock = FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    edit_runtime_config(
        settings.runtime_config_path,
        telegram={"allowedUsers": [ALICE.id, BOB.id]},
        reminders={"defaultTimezone": "Europe/Berlin"},
    )
    settings.openai_base_url = fake_llm.base_url
    inbox = settings.data_dir / "telegram" / "inbox.jsonl"
    options = TelegramOptions(telegram.token, inbox, api_url=telegram.api_url, **FAST)
    app = BotApp.build(settings, telegram=options, clock=clock)
    assert app.telegram is not None
    await app.telegram.start()
    await app.start()
    yield app, clock
    await app.telegram.stop()
    await app.aclose()


def tool_call(**arguments) -> Reply:
    return Reply(tool_calls=[("reminders", json.dumps(arguments))])


async def test_a_reminder_arrives_while_the_llm_is_down_and_the_next_turn_knows_it(
    reminding_bot, telegram, fake_llm
):
    app, clock = reminding_bot
    fake_llm.script(
        tool_call(action="add", text="call Olga", at="2026-03-02 09:00"),
        Reply(text="I'll remind you tomorrow at 9."),
    )
    telegram.send_text(ALICE, "remind me tomorrow at 9 to call Olga")
    (answer,) = await replies(telegram, ALICE.id)
    assert answer.text == "I'll remind you tomorrow at 9."
    tool_result = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "Mon 02 Mar 2026 09:00 (Europe/Berlin): call Olga" in tool_result

    fake_llm.responder = lambda body: Reply(status=503, error_message="the LLM is down")
    asked = len(fake_llm.requests)
    clock.now = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
    app.reminders.wake()
    reminder = (await replies(telegram, ALICE.id, 2))[1]
    assert reminder.text.startswith("⏰ Reminder: call Olga")
    assert len(fake_llm.requests) == asked, "delivered without an LLM call"

    fake_llm.responder = EchoResponder()
    telegram.send_text(ALICE, "what was that about?")
    await replies(telegram, ALICE.id, 3)
    said = [(m["role"], m["content"]) for m in fake_llm.requests[-1]["messages"]]
    assert ("assistant", reminder.text) in said, "the session holds the reminder"
    assert said[-1] == ("user", "what was that about?")


async def test_a_weekly_reminder_in_a_forum_topic_arrives_in_that_topic_only(
    reminding_bot, telegram, fake_llm
):
    app, clock = reminding_bot
    topic = telegram.create_topic(FORUM, "Planning", creator=ALICE)
    other = telegram.create_topic(FORUM, "Chatter", creator=ALICE)
    fake_llm.script(
        tool_call(action="add", text="What is your plan for this week?", repeat=WEEKLY),
        Reply(text="Every Monday at 8 I'll ask."),
    )
    mention = f"@{telegram.bot.username}"
    telegram.send_text(ALICE, f"{mention} every Monday at 8 ask me for my weekly plan",
                       chat=FORUM, thread_id=topic)  # fmt: skip
    await replies(telegram, FORUM.id, thread_id=topic)

    clock.now = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)  # Monday 08:00 in Berlin
    app.reminders.wake()
    weekly = (await replies(telegram, FORUM.id, 2, thread_id=topic))[1]
    assert weekly.text.startswith("⏰ Reminder: What is your plan for this week?")
    assert "Next time: Mon 09 Mar 2026 08:00." in weekly.text
    assert telegram.messages(FORUM.id, thread_id=other) == []

    telegram.send_text(BOB, "/reminders")  # another person's private chat sees none of it
    (bob_list,) = await replies(telegram, BOB.id)
    assert "No reminders in this chat." in bob_list.text
    telegram.chat_exists(Chat.private_with(ALICE))  # asked in a group, answered in private
    telegram.send_text(ALICE, "/reminders", chat=FORUM, thread_id=topic)
    listing = (await replies(telegram, ALICE.id))[0].text
    assert "Mon 09 Mar 2026 08:00, repeats every Monday at 08:00, Europe/Berlin" in listing
    (reminder,) = await app.reminders.book.all()
    telegram.send_text(ALICE, f"/reminders cancel {reminder.id}", chat=FORUM, thread_id=topic)
    cancelled = (await replies(telegram, ALICE.id, 2))[1].text
    assert cancelled.endswith(
        f"Cancelled reminder #{reminder.id}: What is your plan for this week?"
    )
    pointers = [m.text for m in telegram.messages(FORUM.id, thread_id=topic)[2:]]
    assert pointers == ["I've sent you the answer to /reminders in private."] * 2
    assert (await app.reminders.book.all()) == []


async def test_a_stranger_cannot_set_a_reminder(reminding_bot, telegram, fake_llm):
    app, _ = reminding_bot
    fake_llm.script(tool_call(action="add", text="spam", in_minutes=1))
    telegram.send_text(EVE, "remind me in a minute to spam")
    telegram.send_text(EVE, "/reminders")
    (refusal,) = await replies(telegram, EVE.id)
    assert "not on its list" in refusal.text
    telegram.send_text(ALICE, "/reminders")
    await replies(telegram, ALICE.id)
    assert fake_llm.requests == [] and (await app.reminders.book.all()) == []


async def test_fifty_reminders_due_at_once_keep_telegrams_pace(reminding_bot, settings, telegram):
    """A burst of reminders to many chats waits its turn at the bot-wide send budget
    (`telegram.messagesPerSecond`) instead of meeting Telegram's 429s; each arrives once."""

    app, clock = reminding_bot
    edit_runtime_config(settings.runtime_config_path, telegram={"messagesPerSecond": 10})
    due = datetime(2026, 3, 1, 13, 0, tzinfo=UTC)
    for n in range(50):
        chat = str(8000 + n)
        telegram.chat_exists(Chat.private_with(User(8000 + n)))
        await app.reminders.book.add(
            Reminder(id=await app.reminders.book.new_id(), channel="telegram", chat_id=chat,
                     user_id=chat, text=f"stretch {n}", zone="UTC", next_at=due,
                     created_at=clock.now),
            limit=10,
        )  # fmt: skip
    clock.now = due
    app.reminders.wake()
    chats = range(8000, 8050)
    await telegram.wait_for(lambda: all(len(telegram.texts(c)) == 1 for c in chats), 60)
    assert all(telegram.texts(c)[0].startswith(f"⏰ Reminder: stretch {c - 8000}") for c in chats)
    times = sent_times(telegram)
    assert times[-1] - times[0] >= 3.5, "50 messages at 10 a second take 4 s at the least"
    assert most_in_any_window(times, 2.0) <= 30
    left: list[Reminder] = [None]  # type: ignore[list-item]

    async def book_empty() -> bool:
        left[:] = await app.reminders.book.all()
        return not left

    for _ in range(300):  # the receipts are written after the sends
        if await book_empty():
            break
        await asyncio.sleep(0.05)
    assert left == [], "every reminder was delivered and struck off"
    assert all(len(telegram.texts(c)) == 1 for c in chats), "each arrived once"
