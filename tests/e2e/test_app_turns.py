"""The whole app (real openai client, real files) against a local OpenAI-compatible server."""

import json

from bot.storage.sessions import JsonSessionStore
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, BOB, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply


async def test_turns_new_and_config_edit(app, settings, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "first message"), channel)
    await app.handle(say(ALICE, "second message"), channel)
    assert channel.texts() == ["echo: first message", "echo: second message"]
    second_request = fake_llm.requests[1]["messages"]
    assert [m["role"] for m in second_request] == ["system", "user", "assistant", "user"]
    assert "personal assistant" in second_request[0]["content"]
    assert "# Available Tools" in second_request[0]["content"]

    await app.handle(say(ALICE, "/new"), channel)
    assert "fresh conversation" in channel.texts()[-1]
    await app.handle(say(ALICE, "after new"), channel)
    after = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in after] == ["system", "user"]

    edit_runtime_config(settings.runtime_config_path, llm={"model": "edited-model"})
    await app.handle(say(ALICE, "with the new model"), channel)
    assert fake_llm.requests[-1]["model"] == "edited-model"

    archived = list((settings.data_dir / "sessions" / "archive").glob("*.json"))
    assert len(archived) == 1
    old = json.loads(archived[0].read_text())["messages"]
    assert [m["content"] for m in old] == [
        "first message",
        "echo: first message",
        "second message",
        "echo: second message",
    ]


async def test_tool_call_turn_is_saved_whole(app, settings, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[("calculator", '{"expression": "21*2"}')]), Reply(text="It is 42.")
    )
    channel = RecordingChannel()
    await app.handle(say(BOB, "what is 21*2?"), channel)
    assert channel.texts() == ["It is 42."]
    tool_message = fake_llm.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "21*2 = 42"
    saved = await JsonSessionStore(settings.data_dir / "sessions").load(BOB.session_key)
    assert [m.role for m in saved.messages] == ["user", "assistant", "tool", "assistant"]


async def test_llm_outage_gives_a_clear_reply_and_keeps_the_session_clean(app, settings, fake_llm):
    edit_runtime_config(settings.runtime_config_path, llm={"retryAttempts": 2})
    fake_llm.script(Reply(status=503), Reply(status=503))
    channel = RecordingChannel()
    await app.handle(say(ALICE, "are you there?"), channel)
    assert "HTTP 503" in channel.texts()[0]
    saved = await JsonSessionStore(settings.data_dir / "sessions").load(ALICE.session_key)
    assert [(m.role, m.content) for m in saved.messages] == [("user", "are you there?")]


async def test_status_and_help_and_unknown_commands(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "hello"), channel)
    await app.handle(say(ALICE, "/status", operator=True), channel)
    status = channel.texts()[-1]
    assert "Model: gpt-4o-mini at 127.0.0.1" in status
    assert "1 turn (2 messages)" in status
    assert "Long-term memory (LightRAG): off" in status
    assert "Looking at photos (llm.vision): off" in status
    assert "sk-test-secret-key-123456" not in status
    await app.handle(say(ALICE, "/help"), channel)
    assert "/new" in channel.texts()[-1] and "/status" in channel.texts()[-1]
    await app.handle(say(ALICE, "/teleport now"), channel)
    assert channel.texts()[-1] == "Unknown command /teleport. Send /help to see what I can do."
    assert len(fake_llm.requests) == 1, "commands never reach the LLM"


async def test_status_shows_server_details_to_operators_only(app, settings):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/status", operator=True), channel)
    operator = channel.texts()[-1]
    assert "Model: gpt-4o-mini at 127.0.0.1:" in operator
    assert f"Runtime config: {settings.runtime_config_path} (valid)" in operator
    await app.handle(say(BOB, "/status"), channel)
    user = channel.texts()[-1]
    assert "Model: gpt-4o-mini\n" in user and "Runtime config: valid" in user
    for detail in ("127.0.0.1", "runtime-config.json", str(settings.data_dir.parent)):
        assert detail not in user


async def test_status_reports_a_rejected_config_edit(app, settings):
    settings.runtime_config_path.write_text('{"llm": {"temperature": 9}}')
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/status", operator=True), channel)
    assert "⚠ Runtime config" in channel.texts()[-1]
    assert "llm.temperature" in channel.texts()[-1]
    await app.handle(say(BOB, "/status"), channel)
    assert "⚠ Runtime config: the last edit was rejected" in channel.texts()[-1]
    assert "runtime-config.json" not in channel.texts()[-1]


async def test_a_long_chat_keeps_its_session_file_bounded(app, settings):
    edit_runtime_config(settings.runtime_config_path, llm={"sessionMaxMessages": 20})
    edit_runtime_config(settings.runtime_config_path, rateLimit={"messagesPerMinute": 1000})
    channel = RecordingChannel()
    for n in range(30):
        await app.handle(say(ALICE, f"message number {n}"), channel)
    (path,) = (settings.data_dir / "sessions").glob("*.json")
    messages = json.loads(path.read_text())["messages"]
    assert len(messages) <= 20
    assert messages[0]["role"] == "user"
    assert messages[-1]["content"] == "echo: message number 29"
