"""In a group, `/memory`, `/forget` and `/reminders` are answered to the member who asked
alone: in their private chat, with one line in the group; a member who never started a
private chat with the bot (Telegram answers 403) is told to, and the group sees nothing."""

from __future__ import annotations

import pytest

from tests.conftest import edit_runtime_config
from tests.e2e.test_telegram_bot import ALICE, BOB, GROUP, replies, start_bot  # noqa: F401
from tests.fakes.telegram_server import Chat


@pytest.fixture
def start(start_bot):  # noqa: F811 - the Telegram tests' fixture, under a name of its own here
    """Starts the bot in Telegram, as `start_bot` in test_telegram_bot.py."""
    return start_bot


async def group_remembers_wifi(telegram) -> None:
    """Bob tells the group something the bot keeps in the group's memory."""
    telegram.send_text(BOB, f"@{telegram.bot.username} our wifi password is Heron5", chat=GROUP)
    await replies(telegram, GROUP.id)


async def test_memory_asked_in_a_group_is_answered_in_private(start, telegram):
    await start()
    telegram.chat_exists(Chat.private_with(ALICE))  # she started a private chat long ago
    await group_remembers_wifi(telegram)

    telegram.send_text(ALICE, "/memory", chat=GROUP)
    pointer = (await replies(telegram, GROUP.id, 2))[1]
    assert pointer.text == "I've sent you the answer to /memory in private."
    (answer,) = await replies(telegram, ALICE.id)
    assert answer.text.startswith("You asked /memory in a group; the answer is for you alone")
    assert "Heron5" in answer.text and "#" in answer.text, "the group's memory, listed"
    assert telegram.messages(BOB.id) == [], "nobody else is written to"


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("/reminders", "No reminders in this chat."),
        ("/forget all", "Only the bot's operators can make me forget"),
    ],
)
async def test_reminders_and_forget_asked_in_a_group_are_answered_in_private(
    start, telegram, command, says
):
    await start()
    telegram.chat_exists(Chat.private_with(ALICE))
    telegram.send_text(ALICE, command, chat=GROUP)
    (pointer,) = await replies(telegram, GROUP.id)
    name = command.split()[0][1:]
    assert pointer.text == f"I've sent you the answer to /{name} in private."
    (answer,) = await replies(telegram, ALICE.id)
    assert says in answer.text


async def test_a_member_without_a_private_chat_is_told_to_start_one_and_shown_nothing(
    start, telegram, settings
):
    await start()
    edit_runtime_config(settings.runtime_config_path, telegram={"adminUsers": [BOB.id]})
    await group_remembers_wifi(telegram)

    telegram.send_text(BOB, "/memory", chat=GROUP)
    told = (await replies(telegram, GROUP.id, 2))[1]
    assert told.text.startswith("I answer /memory only in private, and Telegram lets me write")
    refused = [c for c in telegram.calls("sendMessage") if c.params.get("chat_id") == BOB.id]
    assert [c.status for c in refused] == [403], "tried once in private, refused"
    assert telegram.messages(BOB.id) == []

    telegram.send_text(BOB, "/forget all", chat=GROUP)
    told = (await replies(telegram, GROUP.id, 3))[2]
    assert told.text.startswith("I answer /forget only in private")
    assert "remember" not in told.text.lower(), "no count, no listing in the group"

    telegram.send_text(BOB, "/start")  # he opens the private chat
    await replies(telegram, BOB.id)
    telegram.send_text(BOB, "/memory", chat=GROUP)
    pointer = (await replies(telegram, GROUP.id, 4))[3]
    assert pointer.text == "I've sent you the answer to /memory in private."
    assert "Heron5" in (await replies(telegram, BOB.id, 2))[1].text


async def test_commands_that_hold_nothing_private_still_answer_in_the_group(start, telegram):
    await start()
    telegram.send_text(ALICE, "/help", chat=GROUP)
    (listing,) = await replies(telegram, GROUP.id)
    assert "/memory" in listing.text
    assert telegram.messages(ALICE.id) == []
