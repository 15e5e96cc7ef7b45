"""Odd and hostile input from Telegram: a sensible reply or silence, never a crash."""

import json

from tests.fakes.llm import echo
from tests.fakes.openai_server import Reply
from tests.fakes.telegram_server import Chat

EVA, STRANGER = 9001, 9999


def test_odd_input_gets_sensible_replies_and_the_bot_stays_up(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[EVA], rag={"enabled": False})
    eva = stack.user(EVA, "Eva")

    # A sticker (no text at all) and a blank caption: told what the bot can read.
    stack.telegram.send_media(eva, "sticker")
    assert "only read text" in stack.wait_replies(EVA, 1)[0]

    # The longest message Telegram allows; its echo is longer still and arrives in two parts.
    longest = "Tell me about this: " + "x" * (4096 - 20)
    stack.say(EVA, longest)
    parts = stack.wait_replies(EVA, 3)[1:3]
    assert "".join("".join(parts).split()) == "".join(echo(longest).split()), "cut at a space"
    assert all(len(p) <= 4096 for p in parts)

    # Control characters and half an emoji (a lone UTF-16 surrogate) from the wire.
    stack.say(EVA, "bell\x07 and nul\x00 and tab\there")
    assert stack.wait_replies(EVA, 4)[3] == echo("bell and nul and tab\there")
    stack.telegram.inject_update(
        {"message": {"message_id": 777, "from": eva.to_json(), "date": 1,
                     "chat": {"id": EVA, "type": "private"}, "text": "half \ud83d emoji"}}
    )  # fmt: skip
    assert stack.wait_replies(EVA, 5)[4] == echo("half \ufffd emoji")

    # A 100 KB paste, which Telegram clients send as 4096-character messages in a row.
    paste = "".join(f"line {n:05d} of the pasted log file\n" for n in range(2600))[:100_000]
    chunks = [paste[i : i + 4096] for i in range(0, len(paste), 4096)]
    before = len(stack.replies(EVA))
    for chunk in chunks:
        stack.say(EVA, chunk)
    stack.telegram.wait_for_sync(
        lambda: sum(r.startswith("echo: ") for r in stack.replies(EVA)[before:]) >= len(chunks),
        within=90,
    )

    # Commands with stray arguments.
    assert "Commands:" in stack.ask(EVA, "/help me please")
    assert "Model:" in stack.ask(EVA, "/status now, in detail")
    assert "fresh conversation" in stack.ask(EVA, "/new right now!")
    assert "Unknown command /frobnicate" in stack.ask(EVA, "/frobnicate the widgets")

    # An empty message: only the bot's name, in a group. Told to ask in the same message.
    team = Chat.group(-100_555, "Team")
    stack.say(EVA, f"@{stack.telegram.bot.username}", chat=team)
    stack.telegram.wait_for_sync(lambda: len(stack.telegram.texts(team.id)) == 1)
    assert "Write your question" in stack.telegram.texts(team.id)[0]

    # A stranger in a group: the allowlist applies to the sender; nothing reaches the LLM.
    group = Chat.group(-100_777, "Ops")
    llm_calls = len(stack.llm_server.requests)
    stack.say(STRANGER, f"@{stack.telegram.bot.username} tell me Eva's secrets", chat=group)
    stack.telegram.wait_for_sync(lambda: len(stack.telegram.texts(group.id)) == 1)
    assert str(STRANGER) in stack.telegram.texts(group.id)[0]
    assert len(stack.llm_server.requests) == llm_calls
    assert not (stack.data / "sessions" / "telegram%3A-100777.json").exists()

    # A calculation that would hold one C call for hours: refused, and the bot answers on.
    runaway = json.dumps({"expression": "round(1, -10**9)"})
    stack.llm_server.script(Reply(tool_calls=[("calculator", runaway)]))
    stack.converse(EVA, "What is round(1, -10**9)?")
    (tool_result,) = [m for m in stack.llm_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_result["content"].startswith("Error: calculator failed: round's digits")

    stack.converse(EVA, "Still with me after all that?")
    assert stack.bot.alive
    assert "Traceback" not in stack.bot.log()
