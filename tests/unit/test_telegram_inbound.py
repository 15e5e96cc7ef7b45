"""Which updates the bot answers: private chats, mentions in groups, topics, attachments."""

import pytest
from telegram import Update

from bot.adapters.telegram.inbound import BotIdentity, chat_key, read_update
from tests.fakes.telegram_server import Chat, FakeTelegramServer, User

ALICE = User(1001, "Alice", "alice")
GROUP = Chat.group(-100_555)
FORUM = Chat.group(-100_777, forum=True)


@pytest.fixture
def telegram():
    return FakeTelegramServer()  # not started: only its update builders are used


@pytest.fixture
def me(telegram):
    return BotIdentity(telegram.bot.id, telegram.bot.username)


def last_update(telegram) -> Update:
    return Update.de_json(telegram.queued_updates()[-1], None)


def read(telegram, me, require_mention=True):
    return read_update(last_update(telegram), me, require_mention)


def test_private_text_is_read_as_is(telegram, me):
    telegram.send_text(ALICE, "  hello there  ")
    inbound = read(telegram, me)
    assert inbound.text == "hello there"
    assert inbound.address.session_key == f"telegram:{ALICE.id}"
    assert inbound.user_id == ALICE.id and not inbound.in_group


def test_edited_messages_are_ignored(telegram, me):
    message_id = telegram.send_text(ALICE, "first")
    telegram.edit_text(ALICE, message_id, "changed")
    assert read(telegram, me) is None


def test_command_for_another_bot_is_ignored_and_ours_is_kept(telegram, me):
    telegram.send_text(ALICE, "/help@SomeOtherBot")
    assert read(telegram, me) is None
    telegram.send_text(ALICE, f"/help@{me.username}")
    assert read(telegram, me).text == f"/help@{me.username}"


def test_group_message_without_mention_is_ignored_unless_configured(telegram, me):
    telegram.send_text(ALICE, "just chatting with friends", chat=GROUP)
    assert read(telegram, me) is None
    assert read(telegram, me, require_mention=False).text == "just chatting with friends"


def test_group_mention_is_answered_without_the_mention(telegram, me):
    telegram.send_text(ALICE, f"hey @{me.username.upper()} what is 2+2?", chat=GROUP)
    inbound = read(telegram, me)
    assert inbound.text == "hey what is 2+2?"
    assert inbound.in_group and inbound.user_id == ALICE.id


def test_mention_of_someone_else_is_not_a_mention_of_the_bot(telegram, me):
    telegram.send_text(ALICE, "@someone_else look at this", chat=GROUP)
    assert read(telegram, me) is None


def test_reply_to_the_bot_counts_as_addressing_it(telegram, me):
    answer = telegram.bot_message_exists(GROUP, "2+2 is 4")
    telegram.send_text(ALICE, "and what about 3+3?", chat=GROUP, reply_to=answer)
    assert read(telegram, me).text == "and what about 3+3?"
    someones = telegram.send_text(User(5, "Bob"), "I think it's 5", chat=GROUP)
    telegram.send_text(ALICE, "no, it's 4", chat=GROUP, reply_to=someones)
    assert read(telegram, me) is None


def test_forum_topics_are_separate_sessions_and_the_topic_root_is_no_reply(telegram, me):
    topic = telegram.create_topic(FORUM, "Trip plans", creator=User(1, "Admin", is_bot=False))
    telegram.send_text(ALICE, "nobody mentioned the bot", chat=FORUM, thread_id=topic)
    assert read(telegram, me) is None, "every topic message 'replies' to the topic root"
    telegram.send_text(ALICE, f"@{me.username} book it", chat=FORUM, thread_id=topic)
    inbound = read(telegram, me)
    assert inbound.address.thread_id == str(topic)
    assert inbound.address.session_key == f"telegram:{FORUM.id}:{topic}"
    assert chat_key(last_update(telegram)) == inbound.address.session_key


@pytest.mark.parametrize("kind", ["photo", "sticker", "voice", "document"])
def test_attachments_are_named_and_captions_read_as_text(telegram, me, kind):
    telegram.send_media(ALICE, kind)
    inbound = read(telegram, me)
    assert inbound.attachment.kind == kind and inbound.text == ""
    telegram.send_media(ALICE, kind, caption="what is this?")
    assert read(telegram, me).text == "what is this?"


def test_messages_from_bots_and_channels_are_ignored(telegram, me):
    telegram.send_text(User(999, "Other", "other_bot", is_bot=True), "ping", chat=GROUP)
    assert read(telegram, me, require_mention=False) is None


def test_half_an_emoji_from_the_wire_becomes_a_replacement_character(telegram, me):
    telegram.send_text(ALICE, "broken \ud83d emoji")
    inbound = read(telegram, me)
    assert inbound.text == "broken \ufffd emoji"
    inbound.text.encode("utf-8")  # would raise on a lone surrogate


def test_a_voice_note_is_described_for_handlers_and_ignored_unaddressed_in_groups(telegram, me):
    telegram.send_media(ALICE, "voice", content=b"x" * 4000, duration=7)
    attachment = read(telegram, me).attachment
    assert (attachment.kind, attachment.size, attachment.duration) == ("voice", 4000, 7)
    assert attachment.mime_type == "audio/ogg" and attachment.file_id
    telegram.send_media(ALICE, "video_note", chat=GROUP)
    assert read(telegram, me) is None
    answer = telegram.bot_message_exists(GROUP, "what did you say?")
    telegram.send_media(ALICE, "video_note", chat=GROUP, reply_to=answer)
    assert read(telegram, me).attachment.spoken == "video note"
