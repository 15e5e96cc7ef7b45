"""What every `SessionStore` promises (`bot/ports/sessions.py`), and what `/memory` and
`/forget all` rely on it for: the JSON files and PostgreSQL alike."""

from __future__ import annotations

import asyncio

from bot.conversation import ChatMessage


async def test_an_unknown_chat_loads_as_a_fresh_session_of_its_key(new_session_store):
    store = await new_session_store()
    session = await store.load("telegram:-100:7")
    assert session.key == "telegram:-100:7"
    assert session.messages == [] and session.summary == ""


async def test_a_saved_session_is_what_the_next_store_loads(new_session_store):
    store = await new_session_store()
    session = await store.load("telegram:42")
    session.messages += [ChatMessage.user("hi", user_id="42"), ChatMessage.assistant("hello")]
    session.summary = "They met."
    await store.save(session)

    reloaded = await (await new_session_store()).load("telegram:42")
    assert [m.content for m in reloaded.messages] == ["hi", "hello"]
    assert reloaded.summary == "They met." and reloaded.key == "telegram:42"
    assert reloaded.messages[0].user_id == "42"


async def test_keys_that_look_like_paths_stay_apart(new_session_store):
    store = await new_session_store()
    keys = ["a:1", "a:1:2", "a/../x", "a:-1", "../../etc"]
    for key in keys:
        session = await store.load(key)
        session.messages.append(ChatMessage.user(f"in {key}"))
        await store.save(session)
    again = await new_session_store()
    for key in keys:
        assert [m.content for m in (await again.load(key)).messages] == [f"in {key}"]


async def test_any_text_round_trips(new_session_store):
    store = await new_session_store()
    session = await store.load("c")
    odd = "nul \x00 byte, emoji 😀, quotes \"'\\, RTL שלום, line\r\nbreak"
    session.messages += [ChatMessage.user("q"), ChatMessage.assistant(odd)]
    await store.save(session)
    assert (await (await new_session_store()).load("c")).messages[1].content == odd


async def test_archive_starts_fresh_and_keeps_the_old_history_counted(new_session_store):
    store = await new_session_store()
    session = await store.load("telegram:7")
    session.messages += [ChatMessage.user("old", user_id="7"), ChatMessage.assistant("ok")]
    await store.save(session)
    await store.archive("telegram:7")
    assert (await store.load("telegram:7")).messages == []
    assert (await (await new_session_store()).load("telegram:7")).messages == []
    assert await store.count_for("7") == 1, "an archived session is kept"


async def test_archiving_a_chat_never_saved_is_harmless(new_session_store):
    store = await new_session_store()
    await store.archive("nobody:1")
    assert (await store.load("nobody:1")).messages == []


async def test_concurrent_saves_of_one_chat_leave_the_last_one(new_session_store):
    store = await new_session_store()
    session = await store.load("c")

    async def one_more(n: int) -> None:
        session.messages.append(ChatMessage.user(f"m{n}"))
        await store.save(session)

    await asyncio.gather(*(one_more(n) for n in range(20)))
    stored = await (await new_session_store()).load("c")
    assert [m.content for m in stored.messages] == [f"m{n}" for n in range(20)]


async def test_chats_saved_at_once_are_all_kept(new_session_store):
    store = await new_session_store()

    async def chat(n: int) -> None:
        session = await store.load(f"t:{n}")
        session.messages.append(ChatMessage.user(f"hello from {n}", user_id=str(n)))
        await store.save(session)

    await asyncio.gather(*(chat(n) for n in range(30)))
    again = await new_session_store()
    for n in range(30):
        assert [m.content for m in (await again.load(f"t:{n}")).messages] == [f"hello from {n}"]


async def test_forgetting_a_user_drops_their_turns_everywhere_and_keeps_others(
    new_session_store,
):
    store = await new_session_store()
    private = await store.load("telegram:7")  # an older session: no author recorded
    private.messages += [ChatMessage.user("my locker is 12"), ChatMessage.assistant("noted")]
    await store.save(private)
    await store.archive("telegram:7")
    group = await store.load("telegram:-100")
    group.messages += [
        ChatMessage.user("Kaveh's plan", user_id="8"),
        ChatMessage.assistant("a plan for Kaveh"),
        ChatMessage.user("my secret is Zorb", user_id="7"),
        ChatMessage.assistant("echo Zorb"),
        ChatMessage.user("more from Kaveh", user_id="8"),
    ]
    await store.save(group)
    current = await store.load("telegram:7")
    current.messages += [ChatMessage.user("also Zorb", user_id="7"), ChatMessage.assistant("ok")]
    await store.save(current)

    assert await store.count_for("7") == 3
    assert await (await new_session_store()).count_for("7") == 3, "as stored, not cached"
    assert await store.count_for("8") == 2
    assert await store.forget_user("7") == 3
    assert await store.count_for("7") == 0
    again = await new_session_store()
    assert await again.count_for("7") == 0
    assert await again.count_for("8") == 2
    assert [m.content for m in (await again.load("telegram:-100")).messages] == [
        "Kaveh's plan",
        "a plan for Kaveh",
        "more from Kaveh",
    ]
    assert (await again.load("telegram:7")).messages == []


async def test_forgetting_a_user_takes_the_summary_holding_their_words(new_session_store):
    store = await new_session_store()
    group = await store.load("telegram:-100")
    for author in ("anna", "ben", "anna"):
        group.messages.append(ChatMessage.user(f"{author} speaks", user_id=author))
        group.messages.append(ChatMessage.assistant("noted"))
    group.fold_into_summary(4, "Anna and Ben spoke.")
    await store.save(group)
    assert await store.count_for("ben") == 1
    assert await store.forget_user("ben") == 1
    stored = await (await new_session_store()).load("telegram:-100")
    assert stored.summary == "" and [m.content for m in stored.messages] == [
        "anna speaks",
        "noted",
    ]


async def test_forgetting_a_groups_scope_empties_its_chats_and_topics(new_session_store):
    store = await new_session_store()
    for key in ("telegram:-100", "telegram:-100:5", "telegram:-200"):
        session = await store.load(key)
        session.messages += [ChatMessage.user(f"said in {key}", user_id="1")]
        session.messages += [ChatMessage.assistant("ok")]
        await store.save(session)
    assert await store.count_for("group:telegram:-100") == 2
    assert await store.forget_user("group:telegram:-100") == 2
    again = await new_session_store()
    assert (await again.load("telegram:-100:5")).messages == []
    assert len((await again.load("telegram:-200")).messages) == 2
