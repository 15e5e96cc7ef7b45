"""The real PTB Application of the bot against the emulated Bot API and a fake OpenAI server."""

import asyncio
import itertools
import json
import logging
import threading
from urllib.parse import unquote

import aiohttp
import pytest

from bot.adapters.telegram import TelegramOptions, WebhookOptions
from bot.adapters.telegram.inbox import UpdateInbox
from bot.app import BotApp
from bot.i18n.catalogue.telegram import gave_up
from bot.rag.documents import owner_tag_of
from bot.storage.sessions import JsonSessionStore
from tests.conftest import edit_runtime_config
from tests.fakes.background_server import free_port
from tests.fakes.files import pdf_with_text, png_image
from tests.fakes.openai_server import EchoResponder, Reply, images_in
from tests.fakes.telegram_server import Chat, User, utf16_len

ALICE = User(1001, "Alice", "alice")
BOB = User(1002, "Bob", "bob")
EVE = User(6666, "Zorblax", "zorblax_stranger")
GROUP = Chat.group(-100_123, "Friends")
FAST = {
    "edit_interval_seconds": 0.3,
    "typing_interval_seconds": 0.3,
    "typing_delay_seconds": 0.1,
    "poll_timeout_seconds": 1.0,
    "shutdown_grace_seconds": 5.0,
}


@pytest.fixture
async def start_bot(settings, telegram, fake_llm):
    """Start the bot as `python -m bot` would, with short intervals; stopped after the test."""
    running: list[tuple[BotApp, object]] = []

    async def start(allowed=(ALICE.id, BOB.id), drafts=True, **options):
        """`drafts=False`: private chats stream by edited previews too, as groups do."""
        telegram_config = {"allowedUsers": list(allowed), "drafts": drafts}
        edit_runtime_config(settings.runtime_config_path, telegram=telegram_config)
        settings.openai_base_url = fake_llm.base_url
        inbox = settings.data_dir / "telegram" / "inbox.jsonl"  # as from_settings sets it
        options = {**FAST, **options}
        app = BotApp.build(
            settings,
            telegram=TelegramOptions(telegram.token, inbox, api_url=telegram.api_url, **options),
        )
        bot = app.telegram
        assert bot is not None
        await bot.start()
        await app.start()
        running.append((app, bot))
        return bot

    yield start
    for app, bot in reversed(running):
        await bot.stop()
        await app.aclose()


async def all_said_after(telegram, user, text="Thanks!") -> list:
    """The bot's messages to `user`'s private chat before its answer to one more message.

    A chat's messages are answered one at a time, in order: once the answer to `text` is
    there, everything the bot was going to send for the earlier ones has been sent."""
    telegram.send_text(user, text)
    await telegram.wait_for(lambda: f"echo: {text}" in telegram.texts(user.id))
    messages = telegram.messages(user.id)
    assert messages[-1].text == f"echo: {text}"
    return messages[:-1]


def handled_updates(settings) -> int:
    """How many updates the bot has finished handling, as its inbox journal records them:
    once an update is handled, whatever the bot was going to send for it has been sent."""
    try:
        lines = (settings.data_dir / "telegram" / "inbox.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return 0
    return sum(1 for line in lines if line.startswith('{"done"'))


async def replies(telegram, chat_id, count=1, within=15.0, thread_id=None):
    """The bot's messages in a chat once there are `count` of them."""
    kwargs = {} if thread_id is None else {"thread_id": thread_id}
    await telegram.wait_for(lambda: len(telegram.messages(chat_id, **kwargs)) >= count, within)
    return telegram.messages(chat_id, **kwargs)


def visible(text: str) -> str:
    return "".join(text.split())


def sessions(settings) -> list[str]:
    """Session keys with a file on disk."""
    return sorted(unquote(p.stem) for p in (settings.data_dir / "sessions").glob("*.json"))


async def sessions_once_saved(telegram, settings, count: int) -> list[str]:
    """`sessions` once `count` are on disk: a session is saved just after its reply is sent."""
    await telegram.wait_for(lambda: len(sessions(settings)) >= count)
    return sessions(settings)


def saved_session(settings, key: str) -> dict:
    store = JsonSessionStore(settings.data_dir / "sessions")
    return json.loads(store.path_for(key).read_text())


async def saved_contents(telegram, settings, key: str, count: int) -> list[str]:
    """The texts of the saved session once it holds `count` messages: a turn's session is
    saved just after its reply is sent, so a test that saw the reply may be a moment early."""

    def contents() -> list[str]:
        try:
            return [m["content"] for m in saved_session(settings, key)["messages"]]
        except (FileNotFoundError, ValueError):
            return []

    await telegram.wait_for(lambda: len(contents()) >= count)
    return contents()


async def test_start_greets_publishes_the_menu_and_calls_no_llm(start_bot, telegram, fake_llm):
    await start_bot()
    assert {c["command"] for c in telegram.commands} == {
        "start", "help", "new", "stop", "compact", "status", "model", "skill", "usage",
        "memory", "forget", "remember", "reminders", "voice", "language",
    }  # fmt: skip
    telegram.send_text(ALICE, "/start")
    (greeting,) = await replies(telegram, ALICE.id)
    assert greeting.text.startswith("Hi Alice! I'm your assistant")
    assert "/help" in greeting.text and "remember" in greeting.text
    telegram.send_text(ALICE, "/help")
    help_text = (await replies(telegram, ALICE.id, 2))[1].text
    for command in ("/start", "/help", "/new", "/stop", "/status", "/memory", "/forget"):
        assert command in help_text
    telegram.send_text(ALICE, "/teleport")
    assert "Unknown command /teleport" in (await replies(telegram, ALICE.id, 3))[2].text
    assert fake_llm.requests == []


async def test_a_turn_shows_typing_and_replies_formatted(start_bot, telegram, fake_llm, settings):
    await start_bot()
    fake_llm.script(Reply(text="Here is **bold** and `code`.", delay=0.8))
    telegram.send_text(ALICE, "show me formatting")
    (reply,) = await replies(telegram, ALICE.id)
    assert reply.text == "Here is bold and code."
    assert {(e["type"], e["offset"], e["length"]) for e in reply.entities} == {
        ("bold", 8, 4),
        ("code", 17, 4),
    }
    typing = telegram.chat_actions(ALICE.id)
    assert len(typing) >= 2, "typing is refreshed while the LLM works"
    assert all(call.params["action"] == "typing" for call in typing)
    assert typing[0].at < reply.sent_at
    assert fake_llm.requests[0]["messages"][-1]["content"] == "show me formatting"
    assert await sessions_once_saved(telegram, settings, 1) == [f"telegram:{ALICE.id}"]


async def test_streaming_edits_one_message_about_once_per_interval(start_bot, telegram, fake_llm):
    await start_bot(edit_interval_seconds=0.4, drafts=False)
    answer = " ".join(f"word{i}" for i in range(80)) + "\n\n**The end.**"
    fake_llm.script(Reply(text=answer, chunk_delay=0.04))  # about 2.6 s of streaming
    telegram.send_text(ALICE, "tell me a story")
    await telegram.wait_for(lambda: any(m.text.endswith("The end.") for m in telegram.messages()))
    (message,) = telegram.messages(ALICE.id)
    assert message.edits >= 3, "the answer appeared while it was written"
    final_words = message.text.split()
    for shown in message.history:
        # A preview may end in a half word, or show `**` whose closing pair has not come yet.
        words = shown.replace("*", "").split()[:-1]
        assert final_words[: len(words)] == words, "each preview is the start of the answer"
    assert message.text.endswith("word79\n\nThe end.")
    assert message.entity_texts("bold") == ["The end."], "the final edit is formatted"
    writes = [c.at for c in telegram.calls() if c.method in ("sendMessage", "editMessageText")]
    gaps = [b - a for a, b in itertools.pairwise(writes)][:-1]
    assert all(gap >= 0.35 for gap in gaps), f"previews throttled, got gaps {gaps}"


async def test_streaming_off_sends_parts_when_complete(start_bot, telegram, fake_llm, settings):
    await start_bot()
    edit_runtime_config(settings.runtime_config_path, telegram={"streaming": False})
    paragraphs = [f"Part {i}. " + "🙂 emoji and words " * 60 for i in range(8)]
    fake_llm.script(Reply(text="\n\n".join(paragraphs), chunk_delay=0.001))
    telegram.send_text(ALICE, "a long answer please")
    messages = await all_said_after(telegram, ALICE)
    assert telegram.calls("editMessageText") == []
    assert all(utf16_len(m.text) <= 4096 for m in messages)
    assert visible("".join(m.text for m in messages)) == visible("".join(paragraphs))
    assert "stream" not in fake_llm.requests[0] or not fake_llm.requests[0]["stream"]


async def test_reply_over_4096_characters_arrives_whole_in_parts(start_bot, telegram, fake_llm):
    await start_bot()
    code = "\n".join(f"line_{i} = {i} * 2  # 😀" for i in range(400))
    answer = f"Here you go:\n\n```python\n{code}\n```\n\nThat's all."
    fake_llm.script(Reply(text=answer, chunk_delay=0.0005))
    telegram.send_text(ALICE, "write code")
    messages = await all_said_after(telegram, ALICE)
    assert len(messages) >= 3
    assert all(utf16_len(m.text) <= 4096 for m in messages)
    shown_code = "\n".join(block for m in messages for block in m.entity_texts("pre"))
    assert visible(shown_code) == visible(code), "no line lost or cut"
    assert messages[-1].text.endswith("That's all.")


async def test_stranger_is_refused_once_without_llm_call_or_storage(
    start_bot, telegram, fake_llm, settings, caplog
):
    await start_bot()
    with caplog.at_level(logging.DEBUG):
        telegram.send_text(EVE, "my secret plans for today")
        (refusal,) = await replies(telegram, EVE.id)
        telegram.send_text(EVE, "hello??")
        telegram.send_text(ALICE, "hi")  # a later message, to know the stranger's was handled
        await replies(telegram, ALICE.id)
    assert str(EVE.id) in refusal.text and "not on its list" in refusal.text
    assert len(telegram.messages(EVE.id)) == 1, "told once per cooldown"
    assert telegram.chat_actions(EVE.id) == []
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == ["hi"]
    assert await sessions_once_saved(telegram, settings, 1) == [f"telegram:{ALICE.id}"]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for private in ("secret plans", "hello??", "Zorblax", "zorblax_stranger"):
        assert private not in logged, f"{private!r} was logged"


async def test_new_starts_a_fresh_session(start_bot, telegram, fake_llm, settings):
    await start_bot()
    telegram.send_text(ALICE, "remember the number 7")
    await replies(telegram, ALICE.id)
    telegram.send_text(ALICE, "/new")
    assert "fresh conversation" in (await replies(telegram, ALICE.id, 2))[1].text
    telegram.send_text(ALICE, "what number?")
    await replies(telegram, ALICE.id, 3)
    assert [m["role"] for m in fake_llm.requests[-1]["messages"]] == ["system", "user"]
    assert len(list((settings.data_dir / "sessions" / "archive").glob("*.json"))) == 1


LONG_STORY = " ".join(f"word{i}" for i in range(200))


async def test_stop_hangs_up_on_the_stream_and_keeps_what_was_shown(
    start_bot, telegram, fake_llm, settings
):
    bot = await start_bot()
    fake_llm.script(Reply(text=LONG_STORY, chunk_delay=0.05))  # about 10 s in all
    telegram.send_text(ALICE, "tell me a long story")
    await telegram.wait_for(lambda: any("word3" in draft.text for draft in telegram.drafts))
    telegram.send_text(ALICE, "/stop")
    await telegram.wait_for(lambda: fake_llm.hang_ups == 1)
    story, ack = await replies(telegram, ALICE.id, 2)
    assert ack.text.startswith("Stopped.")
    assert story.text.startswith("word0 word1 word2") and story.text.endswith("⏹ Stopped.")
    assert "word199" not in story.text
    key = f"telegram:{ALICE.id}"
    saved = await saved_contents(telegram, settings, key, 2)
    assert saved == ["tell me a long story", story.text], "what was shown, kept whole"
    assert [m["role"] for m in saved_session(settings, key)["messages"]] == ["user", "assistant"]

    telegram.send_text(ALICE, "and now?")
    assert (await replies(telegram, ALICE.id, 3))[2].text == "echo: and now?"
    assert fake_llm.requests[-1]["messages"][-2]["content"] == story.text
    await bot.stop()
    inbox = UpdateInbox(settings.data_dir / "telegram" / "inbox.jsonl", keep=lambda _: True)
    assert inbox.pending() == [], "a stopped turn is handled: nothing to replay"


async def test_stop_before_any_text_sends_one_reply_and_the_queued_message_is_answered(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    fake_llm.script(Reply(text="too slow", delay=10.0))
    telegram.send_text(ALICE, "slow question")
    telegram.send_text(ALICE, "queued question")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    telegram.send_text(ALICE, "/stop")
    ack, answer = await replies(telegram, ALICE.id, 2)
    assert ack.text.startswith("Stopped.") and answer.text == "echo: queued question"
    saved = await saved_contents(telegram, settings, f"telegram:{ALICE.id}", 4)
    assert saved == ["slow question", "⏹ Stopped.", "queued question", "echo: queued question"]
    telegram.send_text(ALICE, "/stop")
    assert "nothing to stop" in (await replies(telegram, ALICE.id, 3))[2].text


async def test_in_a_group_only_who_asked_or_an_operator_can_stop_the_answer(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    fake_llm.script(Reply(text="too slow", delay=10.0), Reply(text="too slow", delay=10.0))
    telegram.send_text(BOB, f"@{telegram.bot.username} slow question", chat=GROUP)
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    telegram.send_text(ALICE, "/stop", chat=GROUP)
    refusal = (await replies(telegram, GROUP.id))[0].text
    assert refusal.startswith("Only whoever asked for this answer")
    telegram.send_text(BOB, "/stop", chat=GROUP)
    assert (await replies(telegram, GROUP.id, 2))[1].text.startswith("Stopped.")

    edit_runtime_config(settings.runtime_config_path, telegram={"adminUsers": [ALICE.id]})
    telegram.send_text(BOB, f"@{telegram.bot.username} another slow one", chat=GROUP)
    await telegram.wait_for(lambda: len(fake_llm.requests) == 2)
    telegram.send_text(ALICE, "/stop", chat=GROUP)
    assert (await replies(telegram, GROUP.id, 3))[2].text.startswith("Stopped."), "operator"


async def test_private_replies_stream_as_one_growing_draft_then_one_message(
    start_bot, telegram, fake_llm
):
    await start_bot()
    answer = " ".join(f"word{i}" for i in range(80)) + "\n\n**The end.**"
    fake_llm.script(Reply(text=answer, chunk_delay=0.04))  # about 2.6 s of streaming
    telegram.send_text(ALICE, "tell me a story")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text.endswith("The end.") and message.edits == 0
    drafts = [d for d in telegram.drafts if d.chat_id == ALICE.id]
    assert len(drafts) >= 3, "the answer appeared while it was written"
    assert len({d.draft_id for d in drafts}) == 1, "one draft, animated as it grows"
    assert drafts[0].text.startswith("word0") and len(drafts[-1].text) > len(drafts[0].text)
    (sent,) = telegram.calls("sendMessage")
    assert drafts[-1].at < sent.at
    assert telegram.calls("editMessageText") == []

    fake_llm.script(Reply(text=answer, chunk_delay=0.02))
    telegram.send_text(ALICE, "@memory_test_bot again, in the group", chat=GROUP)
    await telegram.wait_for(lambda: telegram.texts(GROUP.id)[-1:] == [message.text])
    assert telegram.messages(GROUP.id)[0].edits >= 1, "an edited preview in the group"
    assert all(d.chat_id == ALICE.id for d in telegram.drafts), "groups get no drafts"


async def test_a_bot_api_server_without_drafts_gets_edited_previews(
    start_bot, telegram, fake_llm, caplog
):
    telegram.offers_drafts = False
    await start_bot()
    answer = " ".join(f"word{i}" for i in range(60))
    fake_llm.script(Reply(text=answer, chunk_delay=0.04), Reply(text=answer, chunk_delay=0.04))
    telegram.send_text(ALICE, "first")
    await telegram.wait_for(lambda: telegram.texts(ALICE.id) == [answer])
    assert telegram.messages(ALICE.id)[0].edits >= 1, "streamed by edits instead"
    telegram.send_text(ALICE, "second")
    await telegram.wait_for(lambda: telegram.texts(ALICE.id) == [answer, answer])
    assert len(telegram.calls("sendMessageDraft")) == 1, "asked once, then remembered"
    refusals = [r for r in caplog.records if "streaming by edited previews" in r.getMessage()]
    assert len(refusals) == 1


async def test_commands_do_not_wait_behind_the_answer_in_progress(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    fake_llm.script(Reply(text="the slow answer", delay=2.0))
    telegram.send_text(ALICE, "slow question")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    telegram.send_text(ALICE, "/status")
    (status,) = await replies(telegram, ALICE.id, 1)
    assert status.text.startswith("Model:"), "answered while the LLM is still writing"
    assert (await replies(telegram, ALICE.id, 2))[1].text == "the slow answer"


async def test_new_stops_the_answer_in_progress_and_what_follows_starts_afresh(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    fake_llm.script(Reply(text="never shown", delay=10.0))
    telegram.send_text(ALICE, "slow question")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    telegram.send_text(ALICE, "/new")
    telegram.send_text(ALICE, "fresh question")
    fresh, answer = await replies(telegram, ALICE.id, 2)
    assert "fresh conversation" in fresh.text and answer.text == "echo: fresh question"
    assert [m["role"] for m in fake_llm.requests[-1]["messages"]] == ["system", "user"]
    (archived,) = (settings.data_dir / "sessions" / "archive").glob("*.json")
    old = [m["content"] for m in json.loads(archived.read_text())["messages"]]
    assert old == ["slow question", "⏹ Stopped."]


async def test_model_usage_and_compact_in_telegram(start_bot, telegram, fake_llm, settings):
    edit_runtime_config(settings.runtime_config_path, llm={"models": ["large"]})
    await start_bot()
    telegram.send_text(ALICE, "/model large")
    telegram.send_text(ALICE, "first question")
    telegram.send_text(ALICE, "second question")
    texts = [m.text for m in await replies(telegram, ALICE.id, 3)]
    assert texts == ["This chat now uses large.", "echo: first question", "echo: second question"]
    assert fake_llm.requests[0]["model"] == "large"
    telegram.send_text(ALICE, "/usage")  # commands do not wait for answers: sent after them
    usage = (await replies(telegram, ALICE.id, 4))[3].text
    assert usage.startswith("Today (UTC): ") and "in 2 calls" in usage
    fake_llm.script(Reply(text="Alice asked two questions."))
    telegram.send_text(ALICE, "/compact")
    assert (await replies(telegram, ALICE.id, 5))[4].text.startswith("Compacted: 2 older messages")
    saved = saved_session(settings, f"telegram:{ALICE.id}")
    assert saved["summary"] == "Alice asked two questions."


async def test_group_answers_only_mentions_and_replies(start_bot, telegram, fake_llm, settings):
    await start_bot()
    telegram.send_text(ALICE, "talking among ourselves", chat=GROUP)
    telegram.send_text(ALICE, "/help@SomeOtherBot", chat=GROUP)
    asked = telegram.send_text(ALICE, f"@{telegram.bot.username} what is 2+2?", chat=GROUP)
    (answer,) = await replies(telegram, GROUP.id)
    assert answer.text == "echo: what is 2+2?"
    assert answer.reply_to == asked, "in a group the reply quotes the question"
    telegram.send_text(BOB, "and 3+3?", chat=GROUP, reply_to=answer.message_id)
    assert (await replies(telegram, GROUP.id, 2))[1].text == "echo: and 3+3?"
    telegram.send_text(EVE, f"@{telegram.bot.username} me too", chat=GROUP)
    refusal = (await replies(telegram, GROUP.id, 3))[2]
    assert str(EVE.id) in refusal.text, "the allowlist applies to the sender"

    edit_runtime_config(settings.runtime_config_path, telegram={"requireMentionInGroups": False})
    telegram.send_text(ALICE, "no mention needed now", chat=GROUP)
    assert (await replies(telegram, GROUP.id, 4))[3].text == "echo: no mention needed now"
    asked_texts = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert asked_texts == ["what is 2+2?", "and 3+3?", "no mention needed now"]


async def test_forum_topics_are_separate_sessions(start_bot, telegram, fake_llm, settings):
    await start_bot()
    forum = Chat.group(-100_999, "Forum", forum=True)
    trips = telegram.create_topic(forum, "Trips", creator=ALICE)
    books = telegram.create_topic(forum, "Books", creator=ALICE)
    mention = f"@{telegram.bot.username}"
    telegram.send_text(ALICE, f"{mention} plan Rome", chat=forum, thread_id=trips)
    await replies(telegram, forum.id, thread_id=trips)
    telegram.send_text(ALICE, f"{mention} recommend a novel", chat=forum, thread_id=books)
    (in_books,) = await replies(telegram, forum.id, thread_id=books)
    assert in_books.text == "echo: recommend a novel"
    assert [m["role"] for m in fake_llm.requests[-1]["messages"]] == ["system", "user"]
    assert await sessions_once_saved(telegram, settings, 2) == sorted(
        [f"telegram:{forum.id}:{trips}", f"telegram:{forum.id}:{books}"]
    )


async def test_one_slow_chat_does_not_block_another(start_bot, telegram, fake_llm):
    slow_answer = threading.Event()  # Alice's LLM call lasts until Bob has his answer

    def responder(body):
        question = body["messages"][-1]["content"]
        return Reply(text=f"echo: {question}", hold=slow_answer if question == "slow" else None)

    fake_llm.responder = responder
    await start_bot()
    try:
        telegram.send_text(ALICE, "slow")
        await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
        telegram.send_text(BOB, "fast")
        assert (await replies(telegram, BOB.id))[0].text == "echo: fast"
        assert telegram.messages(ALICE.id) == [], "the slow chat is still working"
    finally:
        slow_answer.set()
    assert (await replies(telegram, ALICE.id))[0].text == "echo: slow"


async def test_messages_of_one_chat_are_answered_in_order(start_bot, telegram, fake_llm):
    def responder(body):
        question = body["messages"][-1]["content"]
        number = int(question.split()[-1])
        return Reply(text=f"echo: {question}", delay=0.05 * (5 - number))

    fake_llm.responder = responder
    await start_bot()
    for number in range(5):
        telegram.send_text(ALICE, f"message {number}")
    messages = await replies(telegram, ALICE.id, 5)
    assert [m.text for m in messages] == [f"echo: message {n}" for n in range(5)]
    history = [m["content"] for m in fake_llm.requests[-1]["messages"][1:]]
    assert history == [x for n in range(5) for x in (f"message {n}", f"echo: message {n}")][:-1]


async def test_rate_limit_replies_politely_with_when_to_retry(
    start_bot, telegram, fake_llm, settings
):
    edit_runtime_config(settings.runtime_config_path, rateLimit={"messagesPerMinute": 2})
    await start_bot()
    for number in range(4):
        telegram.send_text(ALICE, f"message {number}")
    await telegram.wait_for(lambda: handled_updates(settings) == 4)
    texts = telegram.texts(ALICE.id)
    assert texts[:2] == ["echo: message 0", "echo: message 1"]
    assert len(texts) == 3, "one notice, not one per skipped message"
    assert "2 a minute" in texts[2] and "again in" in texts[2]
    seconds = int(texts[2].split("again in ")[1].split()[0])
    assert 50 <= seconds <= 60
    assert len(fake_llm.requests) == 2


async def test_allowlist_edits_apply_to_the_next_message(start_bot, telegram, fake_llm, settings):
    await start_bot(refusal_cooldown_seconds=0)
    telegram.send_text(EVE, "knock knock")
    await replies(telegram, EVE.id)
    edit_runtime_config(settings.runtime_config_path, telegram={"allowedUsers": [EVE.id]})
    telegram.send_text(EVE, "let me in")
    assert (await replies(telegram, EVE.id, 2))[1].text == "echo: let me in"
    edit_runtime_config(settings.runtime_config_path, telegram={"allowedUsers": []})
    telegram.send_text(EVE, "still here?")
    assert str(EVE.id) in (await replies(telegram, EVE.id, 3))[2].text
    assert len(fake_llm.requests) == 1


async def test_status_shows_the_config_path_and_llm_host_to_admin_users_only(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    edit_runtime_config(settings.runtime_config_path, telegram={"adminUsers": [ALICE.id]})
    telegram.send_text(ALICE, "/status")
    telegram.send_text(BOB, "/status")
    admin = (await replies(telegram, ALICE.id))[0].text
    user = (await replies(telegram, BOB.id))[0].text
    assert "at 127.0.0.1:" in admin and str(settings.runtime_config_path) in admin
    assert "Model: gpt-4o-mini\n" in user and "Runtime config: valid" in user
    assert "127.0.0.1" not in user and "runtime-config.json" not in user


async def test_rejected_formatting_is_resent_as_plain_text(start_bot, telegram, fake_llm, caplog):
    telegram.reject_entities(lambda entities: any(e["type"] == "bold" for e in entities))
    await start_bot()
    fake_llm.script(Reply(text="A **bold** claim with [a link](https://example.org)."))
    telegram.send_text(ALICE, "say something bold")
    (message,) = await replies(telegram, ALICE.id)
    assert message.text == "A bold claim with a link (https://example.org)."
    assert message.entities == []
    assert "resending as plain text" in caplog.text


async def test_attachments_get_a_short_answer_and_captions_are_read(start_bot, telegram, fake_llm):
    await start_bot()
    telegram.send_media(ALICE, "sticker")
    assert "only read text" in (await replies(telegram, ALICE.id))[0].text
    telegram.send_media(ALICE, "voice")
    assert "voice" in (await replies(telegram, ALICE.id, 2))[1].text
    telegram.send_media(ALICE, "video", caption="summarise this please")
    await replies(telegram, ALICE.id, 3)
    question = fake_llm.requests[0]["messages"][-1]["content"]
    assert question.startswith("summarise this please") and "video" in question
    first = telegram.send_text(ALICE, "typo heer")
    telegram.edit_text(ALICE, first, "typo here")
    said = await all_said_after(telegram, ALICE)
    assert [m.text for m in said[3:]] == ["echo: typo heer"], "an edit is ignored quietly"
    assert telegram.calls("getUpdates")[0].params["allowed_updates"] == ["message", "guest_message"]


async def test_flood_wait_on_a_reply_is_waited_out_exactly(start_bot, telegram, fake_llm):
    await start_bot()
    telegram.flood_wait("sendMessage", retry_after=2)
    telegram.send_text(ALICE, "hello")
    (message,) = await replies(telegram, ALICE.id)
    attempts = telegram.calls("sendMessage")
    assert [a.status for a in attempts] == [429, 200]
    assert 2.0 <= attempts[1].at - attempts[0].at < 3.0
    assert message.text == "echo: hello"


async def test_flood_wait_during_streaming_delays_the_next_edit(start_bot, telegram, fake_llm):
    await start_bot(edit_interval_seconds=0.3, drafts=False)
    fake_llm.script(Reply(text=" ".join(f"w{i}" for i in range(60)), chunk_delay=0.05))
    telegram.flood_wait("editMessageText", retry_after=1)
    telegram.send_text(ALICE, "stream please")
    await telegram.wait_for(lambda: any("w59" in m.text for m in telegram.messages()))
    edits = telegram.calls("editMessageText")
    assert edits[0].status == 429
    assert edits[1].at - edits[0].at >= 1.0, "nothing is sent to the chat during the wait"


async def test_bot_api_5xx_and_lost_edits_are_retried_or_resent(start_bot, telegram, fake_llm):
    await start_bot()
    telegram.fail("sendMessage", 502, times=2)
    telegram.send_text(ALICE, "one")
    assert (await replies(telegram, ALICE.id))[0].text == "echo: one"
    assert [c.status for c in telegram.calls("sendMessage")] == [502, 502, 200]

    fake_llm.script(Reply(text=" ".join(f"w{i}" for i in range(40)), chunk_delay=0.04))
    telegram.fail("editMessageText", 400, "Bad Request: message to edit not found", times=10)
    telegram.send_text(ALICE, "two")
    await telegram.wait_for(lambda: any(m.text.endswith("w39") for m in telegram.messages()))
    assert telegram.messages(ALICE.id)[-1].text.endswith("w39"), "final text sent anew"


async def test_message_not_modified_counts_as_shown(start_bot, telegram, fake_llm, caplog):
    await start_bot(drafts=False)
    fake_llm.script(Reply(text=" ".join(f"w{i}" for i in range(40)), chunk_delay=0.04))
    telegram.fail(
        "editMessageText",
        400,
        "Bad Request: message is not modified: specified new message content and reply "
        "markup are exactly the same as a current content and reply markup of the message",
        times=1,
    )
    telegram.send_text(ALICE, "stream")
    await telegram.wait_for(lambda: any(m.text.endswith("w39") for m in telegram.messages()))
    assert len(telegram.messages(ALICE.id)) == 1
    assert telegram.calls("editMessageText")[0].status == 400
    assert "failed" not in caplog.text


async def test_a_chat_that_cannot_be_reached_is_logged_and_others_go_on(
    start_bot, telegram, fake_llm, caplog
):
    await start_bot()
    telegram.fail(
        "sendMessage",
        400,
        "Bad Request: chat not found",
        times=10,
        when=lambda p: p["chat_id"] == ALICE.id,
    )
    telegram.send_text(ALICE, "hello")
    await telegram.wait_for(lambda: "could not reply" in caplog.text)
    assert "chat not found" in caplog.text.lower()
    telegram.send_text(BOB, "still there?")
    assert (await replies(telegram, BOB.id))[0].text == "echo: still there?"


async def test_shutdown_lets_the_turn_in_progress_finish(start_bot, telegram, fake_llm, settings):
    bot = await start_bot()
    fake_llm.script(Reply(text="finished in time", delay=1.0))
    telegram.send_text(ALICE, "slow question")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    await bot.stop()
    assert telegram.texts(ALICE.id) == ["finished in time"]
    saved = saved_session(settings, f"telegram:{ALICE.id}")
    assert [m["content"] for m in saved["messages"]] == ["slow question", "finished in time"]


async def test_shutdown_cancels_a_turn_past_the_grace_period(
    start_bot, telegram, fake_llm, settings
):
    bot = await start_bot(shutdown_grace_seconds=0.5)
    never_answered = threading.Event()  # the LLM's answer comes only after the stop
    fake_llm.script(Reply(text="too late", hold=never_answered))
    telegram.send_text(ALICE, "very slow question")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 1)
    try:
        await asyncio.wait_for(bot.stop(), 60)  # a stop that waited for the turn never ends
    finally:
        never_answered.set()
    saved = saved_session(settings, f"telegram:{ALICE.id}")
    assert saved["messages"][0]["content"] == "very slow question", "the message is kept"
    (apology,) = telegram.texts(ALICE.id)
    assert "shutting down" in apology, "cut short, but never left without an answer"


async def test_webhook_mode_checks_the_secret_on_every_request(start_bot, telegram, fake_llm):
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook"
    webhook = WebhookOptions(url=url, listen="127.0.0.1", port=port, secret="s3cret_token")
    await start_bot(webhook=webhook)
    assert telegram.webhook_url == url and telegram.webhook_secret == "s3cret_token"
    telegram.send_text(ALICE, "via webhook")
    assert (await replies(telegram, ALICE.id))[0].text == "echo: via webhook"
    assert telegram.calls("getUpdates") == []
    forged = telegram.queued_updates() or [{"update_id": 1, "message": {}}]
    async with aiohttp.ClientSession() as session:
        headers = {"X-Telegram-Bot-Api-Secret-Token": "wrong"}
        async with session.post(url, json=forged[0], headers=headers) as response:
            assert response.status == 403
        async with session.post(url, json=forged[0]) as response:
            assert response.status == 403


async def test_each_reply_is_the_llms_answer_to_that_very_message(start_bot, telegram, fake_llm):
    """What the tests here rely on, checked through the bot: each user's words reach the LLM
    as its last user message, and the LLM's answer (the fake echoes) is the reply, unchanged."""
    await start_bot()
    telegram.send_text(ALICE, "ping from Alice")
    telegram.send_text(BOB, "ping from Bob")
    (to_alice,) = await replies(telegram, ALICE.id)
    (to_bob,) = await replies(telegram, BOB.id)
    assert (to_alice.text, to_bob.text) == ("echo: ping from Alice", "echo: ping from Bob")
    asked = sorted(request["messages"][-1]["content"] for request in fake_llm.requests)
    assert asked == ["ping from Alice", "ping from Bob"]


async def test_bad_token_fails_start_with_one_clear_line(settings, telegram, fake_llm):
    settings.openai_base_url = fake_llm.base_url
    inbox = settings.data_dir / "telegram" / "inbox.jsonl"
    options = TelegramOptions("42:wrong-token", inbox, api_url=telegram.api_url)
    app = BotApp.build(settings, telegram=options)
    from bot.adapters.telegram import StartupFailed

    assert app.telegram is not None
    with pytest.raises(StartupFailed) as failure:
        await app.telegram.start()
    assert "rejected the bot token" in str(failure.value)
    assert "wrong-token" not in str(failure.value)
    await app.aclose()


@pytest.mark.parametrize("mode", ["polling", "webhook"])
async def test_messages_cut_short_by_a_stop_are_answered_after_the_restart(
    start_bot, telegram, fake_llm, settings, mode
):
    receiving = {}
    if mode == "webhook":
        port = free_port()
        url = f"http://127.0.0.1:{port}/telegram/hook"
        receiving["webhook"] = WebhookOptions(url=url, listen="127.0.0.1", port=port, secret="s")
    bot = await start_bot(shutdown_grace_seconds=0.3, **receiving)
    fake_llm.script(Reply(text="first answer"), Reply(text="never finished", delay=10.0))
    telegram.send_text(ALICE, "first")
    await replies(telegram, ALICE.id, 1)
    telegram.send_text(ALICE, "second")
    telegram.send_text(ALICE, "third")
    await telegram.wait_for(lambda: len(fake_llm.requests) == 2 and not telegram.pending_updates)
    await bot.stop()  # "second" is cut short, "third" never started; Telegram has both as read

    await start_bot(**receiving)
    await replies(telegram, ALICE.id, 4)
    texts = telegram.texts(ALICE.id)
    assert texts[0] == "first answer" and "shutting down" in texts[1]
    assert texts[2:] == ["echo: second", "echo: third"], "replayed once each, in order"
    saved = await saved_contents(telegram, settings, f"telegram:{ALICE.id}", 6)
    assert saved == ["first", "first answer", "second", "echo: second", "third", "echo: third"]


async def test_a_message_cut_short_twice_gets_an_apology_instead_of_a_third_try(
    start_bot, telegram, fake_llm
):
    fake_llm.responder = lambda body: Reply(text="never finished", delay=10.0)
    for run in (1, 2):
        bot = await start_bot(shutdown_grace_seconds=0.1)
        if run == 1:
            telegram.send_text(ALICE, "a message that never gets through")
        await telegram.wait_for(lambda n=run: len(fake_llm.requests) == n)  # its turn started
        await bot.stop()  # cut short: not marked done, so the next start replays it

    fake_llm.responder = EchoResponder()
    await start_bot()
    await replies(telegram, ALICE.id, 3)
    assert telegram.texts(ALICE.id)[2] == gave_up()
    assert len(fake_llm.requests) == 2, "no third try"
    telegram.send_text(ALICE, "hello again")
    await replies(telegram, ALICE.id, 4)
    # The unanswered message goes with the next one, joined: roles alternate for the model.
    joined = "a message that never gets through\n\nhello again"
    assert telegram.texts(ALICE.id)[3] == f"echo: {joined}"


async def test_a_reply_delivered_just_before_a_stop_is_recorded_not_sent_again(
    start_bot, telegram, fake_llm, settings, monkeypatch
):
    """The stop comes after the reply went out but before the turn was saved (here: a session
    write that never finishes). The replay saves the turn with that reply; no second answer."""
    saving = asyncio.Event()

    async def never_finishes(store, session):
        saving.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(JsonSessionStore, "save", never_finishes)
    bot = await start_bot(shutdown_grace_seconds=0.1)
    telegram.send_text(ALICE, "Answer me once")
    await replies(telegram, ALICE.id, 1)
    await asyncio.wait_for(saving.wait(), 15)
    await bot.stop()  # cut short mid-save: the inbox has no `done` for it
    monkeypatch.undo()

    await start_bot()
    telegram.send_text(ALICE, "And now?")  # its reply proves the replay is over
    await replies(telegram, ALICE.id, 2)
    assert telegram.texts(ALICE.id) == ["echo: Answer me once", "echo: And now?"]
    assert len(fake_llm.requests) == 2, "the first message was not run again"
    saved = await saved_contents(telegram, settings, f"telegram:{ALICE.id}", 4)
    assert saved == ["Answer me once", "echo: Answer me once", "And now?", "echo: And now?"]


def memory_section(prompt: str) -> str:
    """The body of the `# Memory` section of a system prompt ("" when there is none)."""
    heading = "\n# Memory\n"
    return prompt.split(heading, 1)[1].split("\n# ", 1)[0] if heading in prompt else ""


async def test_private_memory_never_reaches_a_group_and_the_groups_stays_there(
    start_bot, telegram, fake_llm
):
    await start_bot()
    mention = f"@{telegram.bot.username}"
    telegram.send_text(ALICE, "my PIN is 4512")
    await replies(telegram, ALICE.id)
    telegram.send_text(ALICE, "what is my PIN?")
    await replies(telegram, ALICE.id, 2)
    assert "4512" in memory_section(fake_llm.system_prompts()[-1]), "recalled in private"

    telegram.send_text(ALICE, f"{mention} what is my PIN?", chat=GROUP)
    await replies(telegram, GROUP.id)
    assert "4512" not in fake_llm.system_prompts()[-1], "the group reads this reply"

    telegram.send_text(ALICE, f"{mention} our wifi password is Heron5", chat=GROUP)
    await replies(telegram, GROUP.id, 2)
    telegram.send_text(BOB, f"{mention} what is the wifi password?", chat=GROUP)
    await replies(telegram, GROUP.id, 3)
    recalled = memory_section(fake_llm.system_prompts()[-1])
    assert "Alice's team's wifi password: Heron5." in recalled, "the group recalls its own"

    telegram.send_text(ALICE, "what is our wifi password?")
    await replies(telegram, ALICE.id, 3)
    assert "Heron5" not in fake_llm.system_prompts()[-1], "the group's stays in the group"


async def test_forget_all_in_a_group_is_for_operators_and_empties_only_the_group(
    start_bot, telegram, fake_llm, settings
):
    await start_bot()
    edit_runtime_config(settings.runtime_config_path, telegram={"adminUsers": [ALICE.id]})
    mention = f"@{telegram.bot.username}"
    telegram.send_text(ALICE, "my PIN is 4512")
    await replies(telegram, ALICE.id)
    telegram.send_text(BOB, f"{mention} our wifi password is Heron5", chat=GROUP)
    await replies(telegram, GROUP.id)

    telegram.chat_exists(Chat.private_with(BOB))  # answers about memory come in private
    telegram.send_text(BOB, "/forget all", chat=GROUP)
    refusal = (await replies(telegram, BOB.id))[0].text
    assert "Only the bot's operators can make me forget what this group" in refusal
    telegram.send_text(BOB, "/memory", chat=GROUP)
    assert "Heron5" in (await replies(telegram, BOB.id, 2))[1].text

    telegram.send_text(ALICE, "/forget all", chat=GROUP)
    asked = (await replies(telegram, ALICE.id, 2))[1].text
    assert "everything I remember from this group" in asked
    telegram.send_text(ALICE, "/forget confirm", chat=GROUP)
    assert "Done: deleted" in (await replies(telegram, ALICE.id, 3))[2].text
    telegram.send_text(ALICE, "/memory", chat=GROUP)
    assert "Heron5" not in (await replies(telegram, ALICE.id, 4))[3].text
    pointers = [m.text for m in (await replies(telegram, GROUP.id, 6))[1:]]
    assert all(p.startswith("I've sent you the answer to /") for p in pointers), pointers

    telegram.send_text(ALICE, "/memory")
    assert "The user's PIN is 4512." in (await replies(telegram, ALICE.id, 5))[4].text
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == [
        "my PIN is 4512",
        "our wifi password is Heron5",
    ]


async def test_a_runaway_answer_is_cut_at_the_limit_and_says_so(start_bot, telegram, fake_llm):
    await start_bot()
    fake_llm.script(Reply(text="word " * 200_000))  # 1 MB; Telegram would get 245 messages
    telegram.send_text(ALICE, "talk forever")
    await telegram.wait_for(lambda: any("was cut here" in m.text for m in telegram.messages()))
    messages = telegram.messages(ALICE.id)
    assert len(messages) <= 6, "20,000 characters: five messages and the note"
    assert messages[-1].text.endswith("characters (llm.maxOutputChars).]")


async def start_post(
    port: int, path: str, headers: dict[str, str], body: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that has sent a post's headers and `body`, which may be shorter than its
    Content-Length (the server then waits for the rest)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    return reader, writer


async def raw_post(port: int, path: str, headers: dict[str, str], body: bytes) -> str:
    """The status line of the server's answer to a post (`start_post`)."""
    reader, writer = await start_post(port, path, headers, body)
    try:
        return (await asyncio.wait_for(reader.readline(), 30)).decode().strip()
    finally:
        writer.close()


async def test_webhook_refuses_before_reading_and_bounds_bodies_and_posts(start_bot, telegram):
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook"
    bot = await start_bot(
        webhook=WebhookOptions(url=url, listen="127.0.0.1", port=port, secret="s3c")
    )
    hook = bot.webhook
    assert hook is not None
    path, huge = "/telegram/hook", str(100 * 1024 * 1024)
    # A stranger announcing 100 MB is refused at its headers, before one byte of the body.
    assert "403" in await raw_post(port, path, {"Content-Length": huge}, b"{")
    assert "403" in await raw_post(
        port, path, {"Content-Length": huge, "X-Telegram-Bot-Api-Secret-Token": "s3x"}, b"{"
    )
    # With the secret: a body over 1 MB is refused, announced or not.
    secret = {"X-Telegram-Bot-Api-Secret-Token": "s3c"}
    assert "413" in await raw_post(port, path, {**secret, "Content-Length": huge}, b"{")
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=b"[" * 2_000_000, headers=secret) as response:
            assert response.status == 413
        nested = b"[" * 100_000 + b"]" * 100_000
        async with session.post(url, data=nested, headers=secret) as response:
            assert response.status == 400
    # Posts being read at once are bounded: the fifth slow one is turned away.
    slow = [
        await start_post(port, path, {**secret, "Content-Length": "900"}, b"{") for _ in range(4)
    ]
    await telegram.wait_for(lambda: hook.reading == 4)  # the server reads all four
    assert "503" in await raw_post(port, path, {**secret, "Content-Length": "900"}, b"{")
    assert hook.reading == 4, "the slow four still wait for their bodies"
    for _, writer in slow:
        writer.close()
    await telegram.wait_for(lambda: hook.reading == 0)  # a post cut short frees its place
    telegram.send_text(ALICE, "still answering?")
    assert (await replies(telegram, ALICE.id))[0].text == "echo: still answering?"


# -- photos and documents (getFile, download, image parts) -----------------------------


def jpeg(width, height):
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (20, 120, 200)).save(out, format="JPEG")
    return out.getvalue()


async def test_a_photo_reaches_a_vision_model_once_shrunk_and_is_not_resent(
    start_bot, settings, telegram, fake_llm
):
    edit_runtime_config(settings.runtime_config_path, llm={"vision": True})
    await start_bot()
    fake_llm.script(Reply(text="A plain blue picture."))
    telegram.send_media(ALICE, "photo", caption="what is this?", content=jpeg(3000, 2000))
    (answer,) = await replies(telegram, ALICE.id)
    assert answer.text == "A plain blue picture."
    [(role, image)] = images_in(fake_llm.requests[0])
    assert role == "user" and image.startswith(b"\xff\xd8")
    question = fake_llm.requests[0]["messages"][-1]["content"]
    assert question[0] == {"type": "text", "text": "[Photo] what is this?"}

    telegram.send_text(ALICE, "and its colour?")
    await replies(telegram, ALICE.id, 2)
    assert images_in(fake_llm.requests[1]) == []  # never sent again
    sent = [m["content"] for m in fake_llm.requests[1]["messages"][1:]]
    assert sent[:2] == ["[Photo] what is this?", "A plain blue picture."]
    session = next((settings.data_dir / "sessions").glob("*.json")).read_text()
    assert "base64" not in session and len(session) < 4000


async def test_with_vision_off_a_photo_is_answered_plainly_without_the_model(
    start_bot, telegram, fake_llm
):
    await start_bot()
    telegram.send_media(ALICE, "photo", content=jpeg(200, 100))
    (answer,) = await replies(telegram, ALICE.id)
    assert "llm.vision is off" in answer.text
    assert fake_llm.requests == []
    assert telegram.calls("getFile") == [], "a photo that will not be looked at is not fetched"


async def test_with_vision_off_a_captioned_photo_gets_its_caption_answered(
    start_bot, telegram, fake_llm
):
    await start_bot()
    telegram.send_media(ALICE, "photo", caption="is 12 times 12 144?", content=jpeg(200, 100))
    line, answer = await replies(telegram, ALICE.id, 2)
    assert "can't see the picture itself" in line.text and "describe" not in line.text
    assert answer.text.startswith("echo: is 12 times 12 144?")
    (request,) = fake_llm.requests
    question = request["messages"][-1]["content"]
    assert question.startswith("is 12 times 12 144?") and "photo" in question
    assert "[Photo]" not in question, "the model is not told it was shown a picture"
    assert telegram.calls("getFile") == []
    telegram.send_media(
        ALICE, "document", caption="and this?", file_name="song.mp3", mime_type="audio/mpeg"
    )
    line, answer = (await replies(telegram, ALICE.id, 4))[2:]
    assert "can't open “song.mp3”" in line.text
    assert answer.text.startswith("echo: and this?")


async def test_a_file_over_the_limit_is_refused_before_any_download(
    start_bot, settings, telegram, fake_llm
):
    edit_runtime_config(settings.runtime_config_path, rag={"enabled": True})
    await start_bot()
    telegram.send_media(
        ALICE, "document", content=b"%PDF", claimed_size=30_000_000, file_name="big.pdf"
    )
    (answer,) = await replies(telegram, ALICE.id)
    assert "20 MB" in answer.text
    assert telegram.calls("getFile") == [] and telegram.downloads == []
    assert fake_llm.requests == []


async def test_a_pdf_is_read_and_queued_for_the_senders_long_term_memory(
    start_bot, settings, telegram, fake_llm
):
    edit_runtime_config(settings.runtime_config_path, rag={"enabled": False})
    await start_bot()
    pdf = pdf_with_text("Invoice 0042: the boat mooring costs 310 euros a year.")
    telegram.send_media(ALICE, "document", content=pdf, file_name="mooring.pdf")
    (answer,) = await replies(telegram, ALICE.id)
    assert "It's in my memory now" in answer.text  # RAG is off: short-term memory keeps it
    assert not list((settings.data_dir / "rag" / "queue").glob("*"))

    edit_runtime_config(
        settings.runtime_config_path, rag={"enabled": True, "url": "http://127.0.0.1:9"}
    )
    telegram.send_media(ALICE, "document", content=pdf, file_name="mooring.pdf")
    answer = (await replies(telegram, ALICE.id, 2))[1]
    assert answer.text.startswith("I read “mooring.pdf”: 1 page, ")
    assert fake_llm.requests == []
    queued = [json.loads(p.read_text()) for p in (settings.data_dir / "rag" / "queue").glob("*")]
    assert [owner_tag_of(d["file_source"]) for d in queued] == [str(ALICE.id)]
    assert "310 euros" in queued[0]["text"]


@pytest.mark.parametrize(
    ("content", "name", "expected"),
    [
        (b"%PDF-1.4 broken", "broken.pdf", "PDF seems damaged"),
        (b"PK\x03\x04", "archive.zip", "I can't open “archive.zip”"),
        (pdf_with_text(""), "scan.pdf", "looks like a scan"),
    ],
)
async def test_what_cannot_be_read_is_said_and_nothing_is_queued(
    start_bot, settings, telegram, fake_llm, content, name, expected
):
    edit_runtime_config(
        settings.runtime_config_path, rag={"enabled": True, "url": "http://127.0.0.1:9"}
    )
    await start_bot()
    telegram.send_media(ALICE, "document", content=content, file_name=name, mime_type=None)
    (answer,) = await replies(telegram, ALICE.id)
    assert expected in answer.text and "Nothing was stored." in answer.text
    assert list((settings.data_dir / "rag" / "queue").glob("*")) == []
    fetched = telegram.calls("getFile") != []
    assert fetched == name.endswith(".pdf"), "a type the bot cannot read is not even fetched"


async def test_in_a_group_media_without_a_mention_is_ignored(start_bot, telegram, fake_llm):
    await start_bot()
    telegram.send_media(ALICE, "document", chat=GROUP, content=b"notes", file_name="a.txt")
    telegram.send_media(ALICE, "photo", chat=GROUP, caption="look at this", content=png_image(8, 8))
    telegram.send_text(ALICE, f"@{telegram.bot.username} hello there", chat=GROUP)
    (answer,) = await replies(telegram, GROUP.id)
    assert answer.text == "echo: hello there"  # the later message, answered, and alone
    assert telegram.calls("getFile") == [] and telegram.downloads == []


def sent_times(telegram, chat_id: int | None = None) -> list[float]:
    """When the Bot API server got each new message the bot sent (to `chat_id`, or any)."""
    return sorted(
        call.at
        for call in telegram.calls("sendMessage")
        if call.status == 200 and (chat_id is None or call.params.get("chat_id") == chat_id)
    )


def most_in_any_window(times: list[float], seconds: float, jitter: float = 0.1) -> int:
    """The most sends that fell within any `seconds`, less `jitter` for the loop's own lag
    between the send budget and the server."""
    return max(
        sum(1 for t in times[i:] if t - start < seconds - jitter) for i, start in enumerate(times)
    )


async def test_a_burst_to_100_chats_keeps_telegrams_pace_and_each_chats_order(
    start_bot, settings, telegram
):
    """Paced as the bot sends: the server sees the pace give or take the loop's own lag."""
    users = [User(7000 + n, f"User{n}") for n in range(100)]
    edit_runtime_config(settings.runtime_config_path, telegram={"messagesPerSecond": 20})
    await start_bot(allowed=[user.id for user in users])
    for user in users:
        telegram.send_text(user, "first")
        telegram.send_text(user, "second")
    answered = ["echo: first", "echo: second"]
    await telegram.wait_for(lambda: all(telegram.texts(u.id) == answered for u in users), 60)
    times = sent_times(telegram)
    assert len(times) == 200
    assert times[-1] - times[0] >= 8.0, "200 messages at 20 a second take 9 s at the least"
    assert most_in_any_window(times, 2.0) <= 60


async def test_a_busy_group_gets_at_most_its_share_a_minute_in_order(start_bot, settings, telegram):
    edit_runtime_config(settings.runtime_config_path, telegram={"groupMessagesPerMinute": 3})
    await start_bot(group_window_seconds=2.0)
    for n in range(7):
        telegram.send_text(ALICE, f"@{telegram.bot.username} question {n}", chat=GROUP)
    telegram.send_text(BOB, "meanwhile in private")
    await telegram.wait_for(lambda: len(telegram.texts(GROUP.id)) == 7, 30)
    assert [text.rsplit(" ", 1)[-1] for text in telegram.texts(GROUP.id)] == [
        str(n) for n in range(7)
    ]
    assert most_in_any_window(sent_times(telegram, GROUP.id), 2.0, jitter=0.5) <= 3
    assert telegram.texts(BOB.id) == ["echo: meanwhile in private"]
    (bobs,) = sent_times(telegram, BOB.id)
    assert bobs < sent_times(telegram, GROUP.id)[-1], "a private chat never waits for a group"
