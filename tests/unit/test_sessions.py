import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from bot.conversation import ChatMessage, Session, ToolCall, recent_history
from bot.conversation.session import history_tokens
from bot.storage import sessions
from bot.storage.atomic import write_atomic
from bot.storage.sessions import JsonSessionStore


async def test_a_crash_mid_write_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    store = JsonSessionStore(tmp_path)
    session = await store.load("c")
    session.messages.append(ChatMessage.user("first"))
    await store.save(session)
    before = store.path_for("c").read_bytes()

    def crash(*args, **kwargs):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    session.messages.append(ChatMessage.user("second"))
    await store.save(session)  # kept in memory for a retry, not raised (see test_disk_full)
    assert store.unwritten() == 1
    assert store.path_for("c").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


async def test_a_save_does_not_wait_for_another_chats_write_under_way(tmp_path, monkeypatch):
    store = JsonSessionStore(tmp_path)
    writing_a, release_a = threading.Event(), threading.Event()

    def slow_for_a(path, data):
        if path == store.path_for("a"):
            writing_a.set()
            release_a.wait(30)
        write_atomic(path, data)

    monkeypatch.setattr(sessions, "write_atomic", slow_for_a)
    a, b = await store.load("a"), await store.load("b")
    a.messages.append(ChatMessage.user("in chat a"))
    b.messages.append(ChatMessage.user("in chat b"))
    saving_a = asyncio.create_task(store.save(a))
    await asyncio.to_thread(writing_a.wait, 30)
    try:
        await asyncio.wait_for(store.save(b), 10)  # before: it queued behind a's write
        assert store.path_for("b").exists() and not store.path_for("a").exists()
    finally:
        release_a.set()
        await saving_a
    assert store.path_for("a").exists() and store.unwritten() == 0


async def test_a_corrupt_file_is_moved_aside_and_a_fresh_session_starts(tmp_path, caplog):
    path = JsonSessionStore(tmp_path).path_for("c")
    path.write_text('{"key": "c", "messages": [{"role": "us')
    with caplog.at_level(logging.WARNING):
        session = await JsonSessionStore(tmp_path).load("c")
    assert session.messages == []
    aside = list(tmp_path.glob("*.corrupt-*.json"))
    assert len(aside) == 1 and aside[0].read_text().startswith('{"key": "c"')
    assert any("damaged" in r.getMessage() for r in caplog.records)


def test_session_keys_map_to_safe_distinct_file_names(tmp_path):
    store = JsonSessionStore(tmp_path)
    names = {store.path_for(k).name for k in ["a:1", "a:1:2", "a/../x", "a:-1"]}
    assert len(names) == 4
    assert all("/" not in n and not n.startswith(".") for n in names)


def test_history_keeps_newest_whole_turns_within_budget():
    messages = []
    for i in range(50):
        messages += [ChatMessage.user(f"question {i} " + "x" * 400), ChatMessage.assistant("ok")]
    kept = recent_history(messages, token_budget=1000)
    assert kept[0].role == "user"
    assert kept[-1].content == "ok"
    assert 3 <= len(kept) // 2 < 50
    assert "question 49" in kept[-2].content


def test_history_never_separates_a_tool_result_from_its_call():
    call = ToolCall(id="c1", name="calculator", arguments='{"expression": "1+1"}')
    messages = [
        ChatMessage.user("a" * 4000),
        ChatMessage.assistant(None, [call]),
        ChatMessage.tool_result("c1", "2"),
        ChatMessage.assistant("two"),
        ChatMessage.user("and now?"),
    ]
    kept = recent_history(messages, token_budget=300)
    assert kept == [messages[-1]]


def test_history_always_keeps_the_current_turn_even_if_too_big():
    messages = [ChatMessage.user("y" * 100_000)]
    assert recent_history(messages, token_budget=256) == messages


def test_history_keeps_a_leading_message_that_is_no_user_s_with_the_turns_after_it():
    reminder = ChatMessage.assistant("Reminder: call Anna")  # a session may start with one
    messages = [reminder, ChatMessage.user("done"), ChatMessage.assistant("great")]
    assert recent_history(messages, token_budget=8000) == messages
    assert recent_history(messages, token_budget=10) == messages[1:]


def test_a_message_cannot_change_once_made_so_what_is_worked_out_from_it_holds():
    message = ChatMessage.user("what is 2+2?")
    tokens, sent = message.tokens, message.api_message
    with pytest.raises(ValidationError):
        message.content = "something much longer " * 100
    assert (message.tokens, message.api_message) == (tokens, sent)
    assert sent == {"role": "user", "content": "what is 2+2?"}


def test_a_session_saved_from_its_messages_json_reads_back_the_same():
    call = ToolCall(id="c1", name="calculator", arguments='{"expression": "1+1"}')
    messages = [
        ChatMessage.user('what is 1+1? "quoted" 😀', external_id="1:7", user_id="1"),
        ChatMessage.assistant(None, [call]),
        ChatMessage.tool_result("c1", "2"),
        ChatMessage.assistant("two"),
    ]
    session = Session(key="telegram:1", messages=messages, summary="Earlier: hello")
    session.summarised["1"] = 3
    assert json.loads(session.to_json()) == json.loads(session.model_dump_json())
    assert Session.model_validate_json(session.to_json()) == session
    assert json.loads(Session(key="k").to_json())["messages"] == []


def test_turn_count_counts_user_messages():
    session = Session(key="k", messages=[ChatMessage.user("a"), ChatMessage.assistant("b")])
    assert session.turn_count == 1


async def test_text_with_lone_surrogates_and_control_characters_is_stored_safely(tmp_path):
    from bot.conversation import ChatAddress, IncomingMessage

    message = IncomingMessage(ChatAddress("t", "1"), "u", "bad \ud800 half\x00 pair 😀\r\nnext\tok")
    assert message.text == "bad \ufffd half pair 😀\nnext\tok"
    store = JsonSessionStore(tmp_path)
    session = await store.load("c")
    session.messages.append(ChatMessage.user(message.text))
    await store.save(session)
    assert (await JsonSessionStore(tmp_path).load("c")).messages[0].content == message.text


async def test_forgetting_a_user_leaves_their_words_in_no_file(tmp_path):
    """The rest of what `/forget all` does to sessions is in tests/contract."""
    store = JsonSessionStore(tmp_path)
    private = await store.load("telegram:7")
    private.messages += [ChatMessage.user("my locker is 12"), ChatMessage.assistant("noted")]
    await store.save(private)
    await store.archive("telegram:7")
    group = await store.load("telegram:-100")
    group.messages += [ChatMessage.user("my secret is Zorb", user_id="7")]
    group.messages += [ChatMessage.user("Kaveh's plan", user_id="8")]
    await store.save(group)
    assert await store.forget_user("7") == 2
    everything = " ".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert "Zorb" not in everything and "locker" not in everything
    assert "Kaveh" in everything
    assert list((tmp_path / "archive").iterdir()) == [], "an emptied archive is deleted"


def test_forgetting_a_groups_scope_drops_every_turn_of_its_chats_and_topics():
    from bot.conversation import ChatMessage, Session

    topic = Session(key="telegram:-100:7")
    topic.messages += [
        ChatMessage(role="user", content="Anna: our wifi is Heron5", user_id="1"),
        ChatMessage(role="assistant", content="Noted."),
        ChatMessage(role="user", content="Bob: and the door code 4512", user_id="2"),
        ChatMessage(role="assistant", content="Noted too."),
    ]
    other_group = Session(key="telegram:-200")
    other_group.messages += [ChatMessage(role="user", content="hi all", user_id="1")]
    assert topic.count_of("group:telegram:-100") == 2
    assert topic.forget_user("group:telegram:-100") == 2
    assert topic.messages == []
    assert other_group.forget_user("group:telegram:-100") == 0
    assert len(other_group.messages) == 1


def test_a_long_chat_keeps_the_session_bounded_and_never_splits_a_turn():
    from bot.conversation import ChatMessage, Session, ToolCall

    session = Session(key="terminal:local")
    for n in range(300):
        session.messages.append(ChatMessage(role="user", content=f"question {n}", user_id="u"))
        call = ToolCall(id=f"c{n}", name="calculator", arguments="{}")
        session.messages.append(ChatMessage(role="assistant", content=None, tool_calls=[call]))
        session.messages.append(ChatMessage.tool_result(f"c{n}", "4"))
        session.messages.append(ChatMessage(role="assistant", content=f"answer {n}"))
        session.trim(50)
    assert len(session.messages) <= 50
    assert session.messages[0].role == "user"
    assert session.messages[-1].content == "answer 299"
    assert session.trim(50) == 0


def test_forget_all_takes_the_summary_holding_the_users_words():
    from bot.conversation import ChatMessage, Session

    group = Session(key="telegram:-100")
    for author in ("anna", "ben", "anna"):
        group.messages.append(ChatMessage.user(f"{author} speaks", user_id=author))
        group.messages.append(ChatMessage.assistant("noted"))
    group.fold_into_summary(4, "Anna and Ben spoke.")
    assert group.summarised == {"anna": 1, "ben": 1}
    assert group.count_of("anna") == 2 and group.count_of("ben") == 1
    assert group.forget_user("ben") == 1
    assert group.summary == "" and group.summarised == {}, "Ben's words were in the summary"
    assert [m.content for m in group.messages] == ["anna speaks", "noted"]

    private = Session(key="telegram:42")
    private.messages += [ChatMessage.user("hi"), ChatMessage.assistant("hello")]
    private.messages += [ChatMessage.user("again"), ChatMessage.assistant("yes")]
    private.fold_into_summary(2, "They said hi.")
    assert private.count_of("42") == 2, "an author-less message in private is the owner's"
    assert private.forget_user("42") == 2 and private.summary == ""


def test_the_cut_is_whole_turns_and_never_the_last_one():
    from bot.conversation import ChatMessage, Session, ToolCall

    session = Session(key="terminal:local")
    for n in range(5):
        session.messages.append(ChatMessage.user(f"question {n}"))
        call = ToolCall(id=f"c{n}", name="calculator", arguments="{}")
        session.messages.append(ChatMessage.assistant(None, [call]))
        session.messages.append(ChatMessage.tool_result(f"c{n}", "4"))
        session.messages.append(ChatMessage.assistant(f"answer {n}"))
    assert session.cut_for(0, 0) == 16, "all but the last turn"
    assert session.cut_for(10**6, 8) == 12, "down to 8 messages: two whole turns remain"
    assert session.cut_for(10**6, 6) == 16, "at most 6, cut at a turn's start: 4 remain"
    assert session.cut_for(10**6, 100) == 0
    assert session.messages[session.cut_for(40, 100)].role == "user"


def test_a_sessions_token_count_follows_every_way_its_history_changes():
    def turn(user: str, n: int) -> list[ChatMessage]:
        asked = ChatMessage.user(f"{user} asks {n} " + "w" * n, user_id=user)
        return [asked, ChatMessage.assistant("a" * n)]

    def then(*steps: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for step in steps:
                step()

        return run

    session = Session(key="telegram:-100")
    messages = session.messages
    changes = [
        lambda: messages.extend(turn("1", 10)),
        lambda: messages.extend(turn("2", 30) + turn("1", 50)),
        lambda: messages.append(ChatMessage.user("cut short", user_id="2")),
        lambda: session.forget_unanswered(messages[-1].external_id),
        lambda: messages.pop(),
        lambda: messages.extend(turn("2", 70) + turn("1", 90) + turn("2", 100)),
        then(lambda: session.forget_user("2"), lambda: messages.extend(turn("1", 1) * 4)),
        then(lambda: session.trim(4), lambda: messages.extend(turn("1", 110) * 4)),
        then(
            lambda: session.fold_into_summary(2, "they talked"),
            lambda: messages.extend(turn("1", 3)),
        ),
        lambda: messages.__setitem__(slice(0, 2), turn("3", 130)),  # as many, others
        lambda: messages.__setitem__(slice(0, 0), turn("3", 140)),
        lambda: messages.clear(),
        lambda: messages.extend(turn("1", 150)),
    ]
    for change in changes:
        session.history_tokens()  # counted before the change, then asked again after it
        change()
        assert session.history_tokens() == history_tokens(messages)
        for budget in (0, 60, 10**6):
            assert session.recent_history(budget) == recent_history(messages, budget)
