"""Guest mode's parts: reading a summons, one answer per query, cut to one message."""

import pytest
from telegram import Update

from bot.adapters.telegram.guest import GuestAnswer, answer_part, read_guest
from bot.adapters.telegram.inbound import BotIdentity, chat_key, read_update
from bot.adapters.telegram.inbox import from_allowed_users
from bot.adapters.telegram.send_budget import is_new_message
from bot.adapters.telegram.splitting import MessagePart, utf16_offsets
from bot.config import RuntimeConfigStore
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed
from tests.conftest import edit_runtime_config
from tests.fakes.telegram_server import Chat, FakeTelegramServer, User

ALICE = User(1001, "Alice", "alice")
EVE = User(6666, "Eve")
ELSEWHERE = Chat.group(-100_777, "Book club")


@pytest.fixture
def telegram():
    return FakeTelegramServer()  # not started: only its update builders are used


@pytest.fixture
def me(telegram):
    return BotIdentity(telegram.bot.id, telegram.bot.username)


def last_update(telegram) -> Update:
    return Update.de_json(telegram.queued_updates()[-1], None)


def test_a_summons_is_a_group_message_of_the_guest_channel_without_the_mention(telegram, me):
    query_id = telegram.summon_guest(ALICE, f"@{me.username} what is 2+2?", ELSEWHERE)
    update = last_update(telegram)
    read = read_guest(update, me)
    assert read is not None
    found_id, inbound = read
    assert found_id == query_id
    assert inbound.text == "what is 2+2?"
    assert inbound.address == ChatAddress("telegram-guest", str(ELSEWHERE.id))
    assert inbound.in_group and inbound.user_id == ALICE.id
    assert chat_key(update) == f"telegram-guest:{ELSEWHERE.id}", "ordered apart from the group"
    assert read_update(update, me, require_mention=True) is None, "not a member's message"


def test_an_ordinary_message_is_no_summons(telegram, me):
    telegram.send_text(ALICE, f"@{me.username} hi", chat=ELSEWHERE)
    assert read_guest(last_update(telegram), me) is None


def test_the_inbox_keeps_summonses_of_allowed_users_only(telegram, settings):
    edit_runtime_config(settings.runtime_config_path, telegram={"allowedUsers": [ALICE.id]})
    keep = from_allowed_users(RuntimeConfigStore(settings.runtime_config_path))
    telegram.summon_guest(ALICE, "@memory_test_bot hi", ELSEWHERE)
    telegram.summon_guest(EVE, "@memory_test_bot my secrets", ELSEWHERE)
    alices, eves = telegram.queued_updates()
    assert keep(alices) and not keep(eves)


def test_an_answer_that_fits_is_posted_whole():
    assert answer_part("Here is **bold**.").text == "Here is bold."


def test_a_long_answer_is_cut_at_a_paragraph_with_a_note_within_one_message():
    paragraphs = [f"Paragraph {i}. " + ("words and 🙂 " * 40).strip() for i in range(20)]
    part = answer_part("\n\n".join(paragraphs))
    assert utf16_offsets(part.text)[-1] <= 4096
    body, note = part.text.rsplit("\n\n", 1)
    assert note.startswith("(Cut here: a guest answer is one message.")
    kept = body.split("\n\n")
    assert kept == paragraphs[: len(kept)], "whole paragraphs, from the first"


class RecordingSender:
    """Stands in for `TelegramSender.answer_guest`: records, or fails as told."""

    def __init__(self, fail: bool = False) -> None:
        self.answers: list[tuple[str, MessagePart]] = []
        self.fail = fail

    async def answer_guest(self, query_id: str, part: MessagePart) -> str:
        self.answers.append((query_id, part))
        if self.fail:
            raise DeliveryFailed("query is too old")
        return "inline-1"


@pytest.mark.parametrize("fail", [False, True])
async def test_a_query_is_answered_at_most_once_whatever_the_core_sends(fail):
    sender = RecordingSender(fail)
    answer = GuestAnswer("q-1", sender, private=None)  # type: ignore[arg-type]
    address = ChatAddress("telegram-guest", "-100777")
    if fail:
        with pytest.raises(DeliveryFailed):
            await answer.send(address, "first")
    else:
        await answer.send(address, "first")
    with pytest.raises(DeliveryFailed, match="not tried twice"):
        await answer.send(address, "second")  # the reply guarantee, say
    assert [(q, p.text) for q, p in sender.answers] == [("q-1", "first")]
    assert answer.delivered is not fail and answer.open_stream(address) is None


def test_a_guest_answer_counts_in_the_bot_wide_send_budget():
    assert is_new_message("answerGuestQuery")
    assert is_new_message("sendMessage") and not is_new_message("sendChatAction")
