"""Memory belongs to where it was learned: a private chat's to its user, a group's to the group."""

import json

import pytest

from bot.commands import CommandRegistry, parse_command
from bot.commands.memory import MemoryCommands
from bot.config import RuntimeConfig
from bot.conversation import ChatAddress, IncomingMessage, Session, memory_scope_of
from bot.pipeline import TurnContext
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.memory_persist import MemoryPersistSystem
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.prompts import PromptFiles
from bot.tools import ToolRegistry
from bot.tools.memory import MemoryTool
from tests.fakes.llm import ScriptedLlm, calls, text
from tests.fakes.memory import RecordingMemory
from tests.fakes.rag import FakeRag, RecordingQueue

ANNA, BOB = "1001", "1002"
PRIVATE = ChatAddress("telegram", ANNA)
GROUP = ChatAddress("telegram", "-100123")
GROUP_KEY = "group:telegram:-100123"


def said(text, user=ANNA, where=PRIVATE, name="Anna", operator=False, thread=None):
    address = ChatAddress(where.channel, where.chat_id, thread) if thread else where
    in_group = where is not PRIVATE
    return IncomingMessage(
        address, user, text, user_name=name, operator=operator, in_group=in_group
    )


def turn(message, final_text="ok"):
    ctx = TurnContext(message, Session(key=message.address.session_key), RuntimeConfig(), None)
    ctx.final_text = final_text
    return ctx


@pytest.fixture
def commands(memory, switch):
    registry = CommandRegistry()
    MemoryCommands(registry, memory, [memory], switch).register()
    return registry


def run(registry, message):
    return registry.run(parse_command(message))


# -- the scope choice ---------------------------------------------------------------------


def test_a_private_chat_recalls_the_users_own_memory():
    scope = memory_scope_of(said("hi"))
    assert scope.owner == ANNA, "existing per-user data keeps working unchanged"
    assert not scope.is_group and scope.speaker is None and scope.may_forget


def test_a_group_uses_the_groups_memory_never_the_speakers():
    scope = memory_scope_of(said("hi", where=GROUP))
    assert scope.owner == GROUP_KEY and scope.is_group
    assert scope.speaker_id == ANNA and scope.speaker.name == "Anna"
    assert memory_scope_of(said("hi", user=BOB, where=GROUP)).owner == GROUP_KEY


def test_every_forum_topic_shares_its_groups_scope():
    trips = memory_scope_of(said("hi", where=GROUP, thread="7"))
    books = memory_scope_of(said("hi", where=GROUP, thread="9"))
    assert trips.owner == books.owner == GROUP_KEY


def test_only_operators_may_make_a_group_forget():
    assert not memory_scope_of(said("/forget all", where=GROUP)).may_forget
    assert memory_scope_of(said("/forget all", where=GROUP, operator=True)).may_forget


def test_a_speaker_without_a_name_is_named_by_id():
    assert memory_scope_of(said("hi", where=GROUP, name=None)).speaker.name == "user 1001"


# -- the turn reads and writes its scope --------------------------------------------------


async def test_a_group_turn_recalls_stores_and_indexes_in_the_group_scope(tmp_path):
    memory, rag, queue = RecordingMemory(), FakeRag(), RecordingQueue()
    prompts = PromptFiles(tmp_path)
    ctx = turn(said("our deploy server is called Heron, remember it", where=GROUP), "Noted!")
    ctx.config = RuntimeConfig.model_validate({"rag": {"enabled": True}})
    await ContextBuildingSystem(prompts, ToolRegistry(), memory, rag).process(ctx)
    await MemoryPersistSystem(memory).process(ctx)
    await RagIndexingSystem(queue).process(ctx)

    assert [r[0] for r in memory.recalled] == [r[1] for r in rag.asked] == [GROUP_KEY]
    (stored,) = memory.stored
    assert stored["owner"] == GROUP_KEY and stored["speaker"].name == "Anna"
    (document,) = queue.documents
    assert document.owner == GROUP_KEY and "User (Anna): our deploy server" in document.text


async def test_a_private_turn_keeps_using_the_user_id(tmp_path):
    memory, rag = RecordingMemory(), FakeRag()
    ctx = turn(said("my PIN is 4512"))
    ctx.config = RuntimeConfig.model_validate({"rag": {"enabled": True}})
    await ContextBuildingSystem(PromptFiles(tmp_path), ToolRegistry(), memory, rag).process(ctx)
    await MemoryPersistSystem(memory).process(ctx)
    assert [r[0] for r in memory.recalled] == [r[1] for r in rag.asked] == [ANNA]
    assert [(stored["owner"], stored["speaker"]) for stored in memory.stored] == [(ANNA, None)]


async def test_a_fact_told_in_private_is_not_recalled_in_the_group(memory):
    await memory.remember_exchange(ANNA, "my PIN is 4512", "Got it.", "turn:p")
    in_group = memory_scope_of(said("what is my PIN?", where=GROUP))
    assert "4512" not in await memory.recall(in_group.owner, "what is my PIN?")
    assert "4512" in await memory.recall(ANNA, "what is my PIN?")


async def test_group_facts_name_the_speaker_and_keep_each_members_slots(memory):
    anna = memory_scope_of(said("x", where=GROUP)).speaker
    bob = memory_scope_of(said("x", user=BOB, name="Bob", where=GROUP)).speaker
    await memory.remember_exchange(GROUP_KEY, "my name is Anna Berg", "Hi!", "t:1", True, anna)
    await memory.remember_exchange(GROUP_KEY, "my name is Bob Stone", "Hi!", "t:2", True, bob)
    facts = [item.content for item in (await memory.overview(GROUP_KEY)).facts]
    assert "Anna's name is Anna Berg." in facts and "Bob's name is Bob Stone." in facts
    await memory.remember_exchange(GROUP_KEY, "my name is Anna Lind", "Hi!", "t:3", True, anna)
    facts = [item.content for item in (await memory.overview(GROUP_KEY)).facts]
    assert "Anna's name is Anna Lind." in facts and "Anna's name is Anna Berg." not in facts
    assert "Bob's name is Bob Stone." in facts


async def test_a_slot_of_the_team_is_shared_by_the_group(memory):
    anna = memory_scope_of(said("x", where=GROUP)).speaker
    bob = memory_scope_of(said("x", user=BOB, name="Bob", where=GROUP)).speaker
    await memory.remember_exchange(
        GROUP_KEY, "our wifi password is Heron5", "Ok", "t:1", True, anna
    )
    await memory.remember_exchange(GROUP_KEY, "our wifi password is Ibis77", "Ok", "t:2", True, bob)
    facts = [item.content for item in (await memory.overview(GROUP_KEY)).facts]
    assert facts == ["Bob's team's wifi password: Ibis77."]


# -- the memory tool ----------------------------------------------------------------------


async def tool_call(registry, message, arguments):
    """One turn in which the model calls the memory tool once; the tool's answer."""
    llm = ScriptedLlm(calls(("memory", json.dumps(arguments))), text("done"))
    ctx = turn(message)
    await ToolLoopSystem(llm, registry).process(ctx)
    return next(m.content for m in ctx.turn_messages if m.role == "tool")


async def test_the_tool_writes_to_the_scope_it_runs_in(memory, switch):
    tools = ToolRegistry([MemoryTool(memory, switch)])
    group_message = said("remember that", where=GROUP)
    added = await tool_call(tools, group_message, {"action": "add", "text": "Likes jazz."})
    assert "Anna: Likes jazz." in added
    assert await memory.count_for(GROUP_KEY) == 1 and await memory.count_for(ANNA) == 0
    item_id = added.split("#", 1)[1].split("]", 1)[0]
    refused = await tool_call(tools, group_message, {"action": "forget", "item_id": item_id})
    assert "Only the bot's operators" in refused and await memory.count_for(GROUP_KEY) == 1
    found = await tool_call(tools, said("find"), {"action": "search", "text": "jazz"})
    assert "Nothing in memory" in found, "the group's items are not the user's private ones"


# -- /memory and /forget in a group -------------------------------------------------------


async def test_memory_in_a_group_lists_the_groups_items_only(memory, commands):
    await memory.remember_exchange(ANNA, "my PIN is 4512", "Got it.", "turn:p")
    speaker = memory_scope_of(said("x", where=GROUP)).speaker
    await memory.remember_exchange(GROUP_KEY, "our wifi is Heron5", "Ok.", "t:g", True, speaker)
    listing = await run(commands, said("/memory", where=GROUP))
    assert "What I remember from this group" in listing and "Heron5" in listing
    assert "4512" not in listing
    assert "Only the bot's operators can make me forget" in listing


async def test_forget_all_in_a_group_is_refused_to_members_and_done_by_operators(memory, commands):
    await memory.remember_exchange(ANNA, "my PIN is 4512", "Got it.", "turn:p")
    speaker = memory_scope_of(said("x", where=GROUP)).speaker
    await memory.remember_exchange(GROUP_KEY, "our wifi is Heron5", "Ok.", "t:g", True, speaker)
    private_count = await memory.count_for(ANNA)

    refused = await run(commands, said("/forget all", where=GROUP))
    assert refused.startswith("Only the bot's operators can make me forget what this group")
    assert await run(commands, said("/forget confirm", where=GROUP)) == refused
    assert await memory.count_for(GROUP_KEY) > 0

    asked = await run(commands, said("/forget all", user=BOB, where=GROUP, operator=True))
    assert "everything I remember from this group" in asked
    assert "nothing to confirm" in await run(commands, said("/forget confirm", user=BOB)), (
        "a confirmation belongs to the scope it was asked in"
    )
    await run(commands, said("/forget all", user=BOB, where=GROUP, operator=True))
    done = await run(commands, said("/forget confirm", user=BOB, where=GROUP, operator=True))
    assert done.startswith("Done: deleted")
    assert await memory.count_for(GROUP_KEY) == 0
    assert await memory.count_for(ANNA) == private_count > 0, "private memory is untouched"


async def test_forget_all_in_private_still_empties_only_the_users_memory(memory, commands):
    await memory.remember_exchange(ANNA, "my PIN is 4512", "Got it.", "turn:p")
    speaker = memory_scope_of(said("x", where=GROUP)).speaker
    await memory.remember_exchange(GROUP_KEY, "our wifi is Heron5", "Ok.", "t:g", True, speaker)
    await run(commands, said("/forget all"))
    assert (await run(commands, said("/forget confirm"))).startswith("Done")
    assert await memory.count_for(ANNA) == 0 and await memory.count_for(GROUP_KEY) > 0
