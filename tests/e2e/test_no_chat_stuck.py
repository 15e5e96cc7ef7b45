"""No chat is ever stuck (issue 24): whatever a server answers instead of an answer, the user
hears what happened, nothing of it is saved or billed, and the next turn works."""

from dataclasses import replace

from bot.storage.sessions import JsonSessionStore
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import LLAMA_CPP, Reply


def last_reply(channel: RecordingChannel) -> str | None:
    """What the user last saw: the last streamed reply's final text, or a message sent."""
    finals = [stream.final for stream in channel.streams]
    return finals[-1] if finals and finals[-1] is not None else channel.texts()[-1]


async def saved_messages(settings, address):
    saved = await JsonSessionStore(settings.data_dir / "sessions").load(address.session_key)
    return [(m.role, m.content) for m in saved.messages]


async def test_an_empty_200_is_told_not_saved_not_billed_and_the_next_turn_works(
    app, settings, fake_llm
):
    fake_llm.profile = LLAMA_CPP  # two user messages in a row would be refused
    fake_llm.script(Reply(empty=True), Reply(empty=True))
    channel = RecordingChannel(streaming=True)
    await app.handle(say(ALICE, "are you there?"), channel)
    assert last_reply(channel) == "The language model sent an empty response. Please try again."
    assert await saved_messages(settings, ALICE) == [("user", "are you there?")]
    assert not list((settings.data_dir / "usage").glob("*.jsonl")), "nothing billed"

    await app.handle(say(ALICE, "hello?"), channel)
    assert last_reply(channel) == "echo: are you there?\n\nhello?"
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]


async def test_a_context_overflow_compacts_the_chat_and_the_answer_still_comes(
    app, settings, fake_llm
):
    edit_runtime_config(
        settings.runtime_config_path,
        llm={"historyTokenBudget": 100_000},
        memory={"enabled": False},  # the system prompt stays the same size turn after turn
    )
    fake_llm.profile = LLAMA_CPP
    channel = RecordingChannel(streaming=True)
    for i in range(4):
        await app.handle(say(ALICE, f"story part {i}: " + "blah " * 150), channel)
    system_size = len(fake_llm.requests[-1]["messages"][0]["content"])
    fake_llm.profile = replace(LLAMA_CPP, context_chars=system_size + 5000)
    fake_llm.script_for(
        lambda body: "running summary" in body["messages"][0]["content"],
        Reply(text="The user told a long story in four parts."),
    )
    await app.handle(say(ALICE, "what was my story about?"), channel)
    assert last_reply(channel) == "echo: what was my story about?"
    assert [role for role, _ in await saved_messages(settings, ALICE)] == ["user", "assistant"]
    final = fake_llm.requests[-1]["messages"]
    assert "The user told a long story in four parts." in final[0]["content"]
