"""/memory, /forget (with confirmation), /remember, the memory tool and the persist system."""

import asyncio
import json
import logging

import pytest

from bot.commands import CommandRegistry, parse_command
from bot.commands.memory import MemoryCommands
from bot.config import RuntimeConfig
from bot.config.model import MemoryConfig, ToolsConfig
from bot.conversation import ChatAddress, IncomingMessage, MemoryScope, Session, ToolCall
from bot.memory.file_repository import file_memory
from bot.memory.remember_switch import RememberSwitch
from bot.pipeline import TurnContext
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.storage.choices import KeyedChoices
from bot.tools import ToolContext, ToolRegistry
from bot.tools.memory import MemoryTool
from tests.fakes.channel import RecordingChannel
from tests.fakes.memory import FakeDocuments, RecordingExtraction, RecordingMemory


@pytest.fixture
def documents():
    return FakeDocuments({"ada": 4})


@pytest.fixture
def registry(memory, switch, documents, timer):
    registry = CommandRegistry()
    MemoryCommands(registry, memory, [memory, documents], switch, clock=timer).register()
    return registry


def command(registry, text, user="ada"):
    call = parse_command(IncomingMessage(ChatAddress("t", user), user, text))
    return registry.run(call)


async def test_memory_lists_facts_newest_first_with_ids_and_counts(registry, memory, clock):
    await memory.remember_exchange("ada", "My name is Ada.", "Hi Ada!", "t1")
    clock.advance(60)
    await memory.remember_exchange(
        "ada", "How do I list open ports on Linux?", "Use `ss -tlnp` to list them.", "t2"
    )
    clock.advance(60)
    await memory.remember_exchange("ada", "I prefer dark mode.", "Noted.", "t3")
    reply = await command(registry, "/memory")
    lines = reply.splitlines()
    assert lines[0] == "What I remember about you (2, newest first):"
    assert lines[1].startswith("#") and "The user prefers dark mode." in lines[1]
    assert "The user's name is Ada." in lines[2]
    assert "Snippets of recent conversations: 1" in reply
    assert "Long-term documents (LightRAG): 4" in reply
    assert "Remembering: on" in reply


async def test_memory_for_a_new_user_says_so(registry):
    reply = await command(registry, "/memory", user="newbie")
    assert reply.startswith("I have no facts or how-tos about you yet.")


async def test_forget_one_item_by_its_id(registry, memory):
    await memory.remember_exchange("ada", "My name is Ada. I live in Oslo.", "Hi!", "t1")
    item = next(f for f in (await memory.overview("ada")).facts if "Oslo" in f.content)
    assert await command(registry, f"/forget #{item.id}") == "Forgotten: The user lives in Oslo."
    assert [f.content for f in (await memory.overview("ada")).facts] == ["The user's name is Ada."]
    assert "I have no item #abcdef12" in await command(registry, "/forget abcdef12")


@pytest.mark.parametrize("args", ["", "everything now", "../etc", "all please"])
async def test_forget_with_bad_arguments_explains_usage(registry, args):
    assert (await command(registry, f"/forget {args}")).startswith("Usage: /forget <id>")


async def test_forget_all_needs_a_confirmation_and_empties_every_store(registry, memory, documents):
    await memory.remember_exchange("ada", "My name is Ada.", "Hi!", "t1")
    await memory.remember_exchange("bob", "My name is Bob.", "Hi!", "t1")
    question = await command(registry, "/forget all")
    assert "1 short-term memory items, 4 long-term documents (LightRAG)" in question
    assert "/forget confirm within 2 minutes" in question
    assert await memory.count_for("ada") == 1, "nothing goes before the confirmation"

    done = await command(registry, "/forget confirm")
    assert done == "Done: deleted 1 short-term memory items, 4 long-term documents (LightRAG)."
    assert await memory.count_for("ada") == 0 and documents.forgotten == ["ada"]
    assert await memory.count_for("bob") == 1, "other users keep theirs"
    assert "nothing to confirm" in await command(registry, "/forget confirm")


async def test_a_confirmation_expires_and_belongs_to_its_user(registry, memory, timer):
    await memory.remember_exchange("ada", "My name is Ada.", "Hi!", "t1")
    await command(registry, "/forget all")
    assert "nothing to confirm" in await command(registry, "/forget confirm", user="eve")
    timer.now += 121
    assert "nothing to confirm" in await command(registry, "/forget confirm")
    assert await memory.count_for("ada") == 1


async def test_forget_all_with_nothing_stored_asks_nothing(registry):
    reply = await command(registry, "/forget all", user="newbie")
    assert reply == "I don't remember anything about you, so there is nothing to forget."


async def test_a_failing_store_is_reported_and_the_others_are_still_emptied(memory, switch, timer):
    registry = CommandRegistry()
    broken = FakeDocuments({"ada": 2}, fail=True)
    MemoryCommands(registry, memory, [memory, broken], switch, clock=timer).register()
    await memory.remember_exchange("ada", "My name is Ada.", "Hi!", "t1")
    await command(registry, "/forget all")
    reply = await command(registry, "/forget confirm")
    assert "deleted 1 short-term memory items" in reply
    assert "could not delete the long-term documents (LightRAG)" in reply
    assert await memory.count_for("ada") == 0


async def test_remember_off_is_kept_per_user_across_restarts(registry, switch, tmp_path):
    assert "Remembering is on" in await command(registry, "/remember")
    assert "add nothing to my memory" in await command(registry, "/remember off")
    assert not switch.is_remembering("ada") and switch.is_remembering("bob")
    reopened = RememberSwitch(switch.path)
    assert not reopened.is_remembering("ada")
    assert "OFF" in await command(registry, "/memory")
    assert "again" in await command(registry, "/remember on")
    assert RememberSwitch(switch.path).is_remembering("ada")
    assert "Usage" in await command(registry, "/remember maybe")


async def test_an_unreadable_switch_file_remembers_nobody(tmp_path, caplog):
    path = tmp_path / "remember-off.json"
    path.write_text("{not json")
    with caplog.at_level(logging.ERROR):
        switch = RememberSwitch(path)
    assert not switch.is_remembering("anyone")
    assert "remembering is off for everyone" in caplog.text
    assert await switch.set_remembering("anyone", True) is False
    assert await switch.status_lines(MemoryScope("anyone", "anyone")) == [
        "Remembering: off for everyone (remember-off.json is unreadable)"
    ]
    assert path.read_text() == "{not json", "the operator's file is left for them to fix"


# -- the memory tool ----------------------------------------------------------------------


def tool_registry(memory, switch):
    return ToolRegistry([MemoryTool(memory, switch)])


async def run_tool(registry, arguments, user="ada"):
    call = ToolCall(id="c1", name="memory", arguments=json.dumps(arguments))
    context = ToolContext(user, f"t:{user}", MemoryScope(user, user))
    return await registry.execute(call, context, ToolsConfig(), 5, 4000)


async def test_the_tool_adds_searches_and_forgets_for_its_user_only(memory, switch):
    tools = tool_registry(memory, switch)
    added = await run_tool(tools, {"action": "add", "text": "The user's boat is called Wave."})
    assert added.startswith("Remembered: - [fact ")
    item_id = added.split("#", 1)[1].split("]", 1)[0]
    assert item_id in await run_tool(tools, {"action": "search", "text": "boat name"})
    assert "Nothing in memory" in await run_tool(tools, {"action": "search", "text": "boat"}, "eve")
    assert "No memory item" in await run_tool(
        tools, {"action": "forget", "item_id": item_id}, "eve"
    )
    assert "Forgot" in await run_tool(tools, {"action": "forget", "item_id": f"#{item_id}"})
    assert await memory.count_for("ada") == 0


async def test_the_tool_stores_nothing_while_remembering_is_off(memory, switch):
    await switch.set_remembering("ada", False)
    reply = await run_tool(tool_registry(memory, switch), {"action": "add", "text": "Likes jazz"})
    assert "remembering off" in reply and await memory.count_for("ada") == 0


async def test_the_tool_does_nothing_while_memory_is_disabled(tmp_path, switch):
    disabled = file_memory(tmp_path / "off", lambda: MemoryConfig(enabled=False))
    reply = await run_tool(tool_registry(disabled, switch), {"action": "add", "text": "Likes jazz"})
    assert "turned off by the operator" in reply and await disabled.count_for("ada") == 0


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"action": "add"}, "Error: give the text to add."),
        ({"action": "forget"}, "Error: give the item_id to forget."),
        ({"action": "teleport"}, "Error: invalid arguments for memory"),
        ({"action": "add", "text": "x" * 1001}, "Error: invalid arguments for memory"),
    ],
)
async def test_the_tool_answers_bad_arguments_with_an_error_text(memory, switch, arguments, error):
    assert (await run_tool(tool_registry(memory, switch), arguments)).startswith(error)


# -- the persist system -------------------------------------------------------------------


def turn(final_text="Sure, noted.", remembering=True, memory_enabled=True, extraction="rules"):
    message = IncomingMessage(ChatAddress("t", "1"), "ada", "My name is Ada.")
    config = RuntimeConfig.model_validate(
        {"memory": {"enabled": memory_enabled, "extraction": extraction}}
    )
    ctx = TurnContext(message, Session(key="t:1"), config, RecordingChannel())
    ctx.final_text, ctx.remembering = final_text, remembering
    return ctx


async def test_persist_hands_over_the_exchange_and_returns_without_waiting():
    memory = RecordingMemory()  # its storing never finishes
    system = MemoryPersistSystem(memory)
    ctx = turn()
    assert system.should_process(ctx)
    await asyncio.wait_for(system.process(ctx), timeout=5)
    (stored,) = memory.stored
    assert (stored["owner"], stored["said"], stored["answer"]) == (
        "ada",
        "My name is Ada.",
        "Sure, noted.",
    )
    assert stored["source"].startswith("turn:t:1:")
    assert stored["config"] is ctx.config.memory, "stored as the turn's config says"


@pytest.mark.parametrize(
    ("mode", "rules", "llm"),
    [("rules", True, False), ("both", True, True), ("llm", False, True)],
)
async def test_persist_hands_the_message_to_rules_llm_or_both(mode, rules, llm):
    memory, extraction = RecordingMemory(), RecordingExtraction()
    await MemoryPersistSystem(memory, extraction).process(turn(extraction=mode))
    (stored,) = memory.stored  # the exchange itself is always kept
    assert stored["with_rules"] is rules
    assert extraction.submitted == ([("ada", "My name is Ada.")] if llm else [])


@pytest.mark.parametrize(
    "ctx",
    [turn(final_text=None), turn(remembering=False), turn(memory_enabled=False)],
    ids=["no answer", "remember off", "memory disabled"],
)
def test_persist_skips_turns_it_must_not_store(ctx):
    assert not MemoryPersistSystem(RecordingMemory()).should_process(ctx)


async def test_persist_failure_is_logged_not_raised(caplog):
    with caplog.at_level(logging.WARNING):
        await MemoryPersistSystem(RecordingMemory(fail=True)).process(turn())
    assert "[Memory] could not start storing the exchange: disk full" in caplog.text


async def test_with_a_choice_store_the_switch_lives_there_and_not_in_its_file(tmp_path):
    store: KeyedChoices[bool] = KeyedChoices(None, "remember-off", bool, "[Memory] /remember")
    switch = RememberSwitch(tmp_path / "remember-off.json", store)
    assert await switch.set_remembering("ada", False)
    assert not switch.is_remembering("ada") and switch.is_remembering("bob")
    assert store.get("ada") is True
    assert await switch.status_lines(MemoryScope("ada", "ada")) != []
    assert not (tmp_path / "remember-off.json").exists()
    assert RememberSwitch(tmp_path / "x.json", store).is_remembering("ada") is False
    assert await switch.set_remembering("ada", True)
    assert store.get("ada") is None and switch.is_remembering("ada")


class WordsDocuments(FakeDocuments):
    """LightRAG's documents as `/forget <id>` searches them: `found` go, or it fails."""

    def __init__(self, found: int = 0, fail: bool = False) -> None:
        super().__init__({"ada": 5}, fail)
        self.found, self.asked = found, []

    async def forget_holding(self, user_id, words, holds):
        if self.fail:
            raise ConnectionError("LightRAG down")
        self.asked.append((user_id, words, holds(f"User: {words}"), holds("User: hello there")))
        return self.found

    async def forget_shared_at(self, user_id, prefix):
        return 0


@pytest.mark.parametrize(
    ("long_term", "said"),
    [
        (WordsDocuments(found=2), "Deleted 2 documents holding them from long-term memory"),
        (WordsDocuments(fail=True), "could not be searched just now, so it may still hold"),
    ],
)
async def test_forget_one_fact_takes_its_snippets_and_says_what_long_term_memory_did(
    memory, switch, timer, long_term, said
):
    registry = CommandRegistry()
    MemoryCommands(registry, memory, [memory, long_term], switch, clock=timer).register()
    told = "btw my sister Olga lives in Porto, near the river"
    await memory.remember_exchange("ada", told, "How nice, Porto is lovely.", "t1")
    bike = "I bought a red bike for the commute to the office downtown"
    await memory.remember_exchange("ada", bike, "Enjoy the rides to work!", "t2")
    (fact,) = [f for f in (await memory.overview("ada")).facts if "Olga" in f.content]
    reply = await command(registry, f"/forget {fact.id}")
    assert reply.startswith("Forgotten: The user's sister Olga lives in Porto")
    assert "Also deleted 1 conversation snippet that held the same words (#" in reply
    assert said in reply
    assert (await memory.overview("ada")).episodes == 1, "the other snippet stays"
    if not long_term.fail:
        assert long_term.asked == [("ada", fact.content, True, False)]


@pytest.mark.parametrize(
    ("long_term", "said"),
    [
        (WordsDocuments(found=2), "Also deleted 2 conversation(s) holding it from long-term"),
        (WordsDocuments(fail=True), "could not be searched just now and may still hold"),
    ],
)
async def test_the_tool_forgets_a_fact_as_far_as_the_command_does(memory, switch, long_term, said):
    """ "Forget that my sister lives in Porto" reaches the model, which forgets through its tool:
    the snippet that said it, and LightRAG's conversations holding it, go too."""
    tools = ToolRegistry([MemoryTool(memory, switch, [long_term])])
    told = "btw my sister Olga lives in Porto, near the river"
    await memory.remember_exchange("ada", told, "How nice, Porto is lovely.", "t1")
    bike = "I bought a red bike for the commute to the office downtown"
    await memory.remember_exchange("ada", bike, "Enjoy the rides to work!", "t2")
    (fact,) = [f for f in (await memory.overview("ada")).facts if "Olga" in f.content]
    reply = await run_tool(tools, {"action": "forget", "item_id": fact.id})
    assert reply.startswith("Forgot: - [fact ") and "Olga" in reply.splitlines()[0]
    assert "Also deleted 1 conversation snippet(s) holding its words." in reply
    assert said in reply
    found = await memory.search("ada", "sister Olga Porto")
    assert not [hit for hit in found if "Olga" in hit.item.content], "no item holds her words"
    assert (await memory.overview("ada")).episodes == 1, "the other snippet stays"
    if not long_term.fail:
        assert long_term.asked == [("ada", fact.content, True, False)]
