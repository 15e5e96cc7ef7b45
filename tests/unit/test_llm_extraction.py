"""LLM fact extraction: batching, aliases, supersede and delete, failures, switches, bounds."""

import asyncio
import json
import logging
from typing import get_args

import pytest

from bot.config.model import LlmConfig, MemoryConfig, RuntimeConfig
from bot.conversation import utc_now
from bot.memory.llm_extraction import LlmFactExtractor
from bot.memory.llm_operations import (
    SCHEMA,
    FactType,
    Operation,
    OpName,
    extraction_request,
    parse_operations,
)
from bot.memory.model import ItemType, MemoryItem, new_item, reworded
from bot.ports.llm import LlmRequest, LlmResponse
from tests.fakes.llm import ScriptedLlm, llm_down, text
from tests.fakes.waiting import wait_until

SECRET = "my sister Olga lives in Porto"


class FakeTarget:
    """`ExtractionTarget` over a dict, recording every change."""

    def __init__(self, *items: MemoryItem) -> None:
        self.items = {item.id: item for item in items}
        self.changes: list[tuple[str, ...]] = []

    async def nearest(self, user_id, text, limit):
        return list(self.items.values())[:limit]

    async def add(self, user_id, new_items):
        for item in new_items:
            self.items[item.id] = item
            self.changes.append(("add", item.type.value, item.content))
        return new_items

    async def replace(self, user_id, item_id, item_type, content):
        if item_id not in self.items:
            return None
        self.items[item_id] = reworded(self.items[item_id], item_type, content, utc_now())
        self.changes.append(("replace", item_id, item_type.value, content))
        return self.items[item_id]

    async def forget(self, user_id, item_id):
        self.changes.append(("forget", item_id))
        return self.items.pop(item_id, None)


class Settings:
    """The runtime config as a test edits it."""

    def __init__(self, **memory) -> None:
        self.memory = {"extraction": "llm", "extraction_batch_seconds": 0.0, **memory}

    def __call__(self) -> RuntimeConfig:
        return RuntimeConfig(llm=LlmConfig(model="main-model"), memory=MemoryConfig(**self.memory))


def answer(*operations: dict) -> LlmResponse:
    return text(json.dumps({"operations": list(operations)}))


def op(name, alias="", kind="fact", said=""):
    return {"op": name, "id": alias, "type": kind, "text": said}


NONE = answer(op("NONE"))


def item(kind: ItemType, content: str, item_id: str) -> MemoryItem:
    made = new_item(kind, content, source="turn:t", confidence=0.9)
    return made.model_copy(update={"id": item_id})


def extractor(llm, target, settings=None, **bounds):
    return LlmFactExtractor(llm, settings or Settings(), target, **bounds)


def shown_to_model(request: LlmRequest) -> tuple[list[dict], list[str]]:
    memories, messages = request.messages[1].content.split("\n")
    return json.loads(memories.removeprefix("Memories: ")), json.loads(
        messages.removeprefix("Messages: ")
    )


# -- batching --------------------------------------------------------------------------------


async def test_quick_turns_of_one_user_go_into_one_call():
    llm, target = ScriptedLlm(NONE), FakeTarget()
    extract = extractor(llm, target, Settings(extraction_batch_seconds=0.3))
    extract.submit("u", "I just moved", "turn:1")
    await asyncio.sleep(0.05)
    extract.submit("u", "to Berlin, with my cat", "turn:2")
    await extract.drain()  # every call made
    assert len(llm.requests) == 1
    assert shown_to_model(llm.requests[0])[1] == ["I just moved", "to Berlin, with my cat"]


async def test_turns_further_apart_than_the_window_are_separate_calls():
    llm, target = ScriptedLlm(NONE, NONE), FakeTarget()
    extract = extractor(llm, target, Settings(extraction_batch_seconds=0.05))
    extract.submit("u", "I like tea", "turn:1")
    await asyncio.sleep(0.2)
    extract.submit("u", "I live in Porto", "turn:2")
    await extract.drain()
    assert [shown_to_model(r)[1] for r in llm.requests] == [["I like tea"], ["I live in Porto"]]


async def test_a_batch_holds_at_most_max_messages():
    llm, target = ScriptedLlm(NONE, NONE), FakeTarget()
    extract = extractor(llm, target, Settings(extraction_max_messages=2))
    for n in range(3):
        extract.submit("u", f"message {n}", f"turn:{n}")
    await extract.drain()
    assert [shown_to_model(r)[1] for r in llm.requests] == [
        ["message 0", "message 1"],
        ["message 2"],
    ]


async def test_one_batch_per_user_at_a_time_and_users_in_parallel():
    active: dict[str, int] = {}
    most: dict[str, int] = {}

    class SlowLlm:
        def __init__(self) -> None:
            self.requests: list[LlmRequest] = []

        async def complete(self, request, on_text=None):
            user = shown_to_model(request)[1][0].split()[0]
            active[user] = active.get(user, 0) + 1
            most[user] = max(most.get(user, 0), active[user])
            await asyncio.sleep(0.1)
            active[user] -= 1
            self.requests.append(request)
            return NONE

    llm = SlowLlm()
    extract = extractor(llm, FakeTarget())
    extract.submit("a", "a first", "t")
    extract.submit("b", "b first", "t")
    await asyncio.sleep(0.02)
    extract.submit("a", "a second", "t")
    await extract.drain()
    assert most == {"a": 1, "b": 1} and len(llm.requests) == 3


# -- aliases, supersede, delete -----------------------------------------------------------


async def test_items_are_shown_under_aliases_and_mapped_back_to_real_ids():
    tea = item(ItemType.PREFERENCE, "The user likes tea.", "a4a053a285")
    home = item(ItemType.IDENTITY, "The user lives in Porto.", "823ac60cc4")
    llm = ScriptedLlm(answer(op("UPDATE", "2", "identity", "The user lives in Berlin.")))
    target = FakeTarget(tea, home)
    extract = extractor(llm, target)
    extract.submit("u", "I moved to Berlin last month", "turn:1")
    await extract.drain()
    memories, _ = shown_to_model(llm.requests[0])
    assert memories == [
        {"id": "1", "type": "preference", "text": "The user likes tea."},
        {"id": "2", "type": "identity", "text": "The user lives in Porto."},
    ]
    assert "a4a053a285" not in llm.requests[0].messages[1].content
    assert target.changes == [("replace", "823ac60cc4", "identity", "The user lives in Berlin.")]
    assert target.items["823ac60cc4"].content == "The user lives in Berlin."


async def test_operations_naming_unknown_aliases_or_real_ids_are_ignored():
    home = item(ItemType.IDENTITY, "The user lives in Porto.", "823ac60cc4")
    llm = ScriptedLlm(
        answer(
            op("UPDATE", "7", "identity", "The user lives in Rome."),
            op("DELETE", "823ac60cc4"),
            op("ADD", "", "preference", "The user likes jazz."),
        )
    )
    target = FakeTarget(home)
    extract = extractor(llm, target)
    extract.submit("u", "I like jazz", "turn:1")
    await extract.drain()
    assert target.changes == [("add", "preference", "The user likes jazz.")]


async def test_a_fact_no_longer_true_is_deleted_and_its_successor_added():
    veg = item(ItemType.CONSTRAINT, "The user is vegetarian.", "1c26995d0f")
    llm = ScriptedLlm(
        answer(op("DELETE", "1", "constraint"), op("ADD", "", "preference", "The user eats fish."))
    )
    target = FakeTarget(veg)
    extract = extractor(llm, target)
    extract.submit("u", "I'm not vegetarian any more, I eat fish now", "turn:9")
    await extract.drain()
    assert "1c26995d0f" not in target.items
    (fish,) = target.items.values()
    assert fish.content == "The user eats fish." and fish.type is ItemType.PREFERENCE
    assert fish.source == "llm:turn:9" and fish.confidence == 0.9


async def test_one_item_changes_once_and_repeats_of_shown_items_are_not_added():
    home = item(ItemType.IDENTITY, "The user lives in Porto.", "823ac60cc4")
    llm = ScriptedLlm(
        answer(
            op("UPDATE", "1", "identity", "The user lives in Berlin."),
            op("DELETE", "1"),
            op("ADD", "", "identity", "The user lives in Porto."),
            op("UPDATE", "1", "identity", "The user lives in Berlin."),
        )
    )
    target = FakeTarget(home)
    extract = extractor(llm, target)
    extract.submit("u", "Berlin now", "turn:1")
    await extract.drain()
    assert target.changes == [("replace", "823ac60cc4", "identity", "The user lives in Berlin.")]


# -- grounding: only what the user said -----------------------------------------------------


async def test_an_add_copied_from_the_prompts_examples_is_not_stored(caplog):
    caplog.set_level(logging.INFO)
    llm = ScriptedLlm(
        answer(
            op("ADD", "", "fact", "The user's sister Olga lives in Porto."),
            op("ADD", "", "constraint", "The user is allergic to peanuts."),
            op("ADD", "", "preference", "The user likes green tea."),
        )
    )
    target = FakeTarget()
    extract = extractor(llm, target)
    extract.submit("u", "I drink green tea every morning", "turn:1")
    await extract.drain()
    assert target.changes == [("add", "preference", "The user likes green tea.")]
    assert "2 ignored (2 not in the user's words)" in caplog.text


async def test_an_update_with_the_prompts_example_does_not_replace_a_true_fact():
    home = item(ItemType.IDENTITY, "The user lives in Lisbon.", "823ac60cc4")
    llm = ScriptedLlm(answer(op("UPDATE", "1", "identity", "The user lives in Berlin.")))
    target = FakeTarget(home)
    extract = extractor(llm, target)
    extract.submit("u", "I love the trams in my city", "turn:1")
    await extract.drain()
    assert target.changes == []
    assert target.items["823ac60cc4"].content == "The user lives in Lisbon."


async def test_a_fact_in_the_assistants_words_not_the_users_is_not_stored():
    """The user only agreed ("yes, book it"); the destination was the assistant's idea."""
    llm = ScriptedLlm(answer(op("ADD", "", "fact", "The user is travelling to Madeira in spring.")))
    target = FakeTarget()
    extract = extractor(llm, target)
    extract.submit("u", "yes, book it please", "turn:1")
    await extract.drain()
    assert target.changes == []


async def test_a_rewording_of_the_users_own_words_is_stored():
    llm = ScriptedLlm(
        answer(
            op("ADD", "", "constraint", "The user is allergic to peanuts."),
            op("ADD", "", "identity", "Пользователь живёт в Казани."),
        )
    )
    target = FakeTarget()
    extract = extractor(llm, target)
    extract.submit("u", "peanuts make me ill", "turn:1")
    extract.submit("u", "я живу в Казани", "turn:2")
    await extract.drain()
    assert [change[2] for change in target.changes] == [
        "The user is allergic to peanuts.",
        "Пользователь живёт в Казани.",
    ]


async def test_the_request_uses_the_extraction_model_the_schema_and_no_randomness():
    config = Settings(extraction_model="small-model", extraction_timeout_seconds=7)()
    request = extraction_request(config, {}, ["hi"])
    assert request.model == "small-model" and request.response_schema is SCHEMA
    assert request.temperature == 0 and request.timeout_seconds == 7
    assert request.retry_max_seconds <= 7
    assert extraction_request(Settings()(), {}, ["hi"]).model == "main-model"


def test_the_schema_is_strict_and_agrees_with_the_model():
    operation = SCHEMA["properties"]["operations"]["items"]
    assert operation["additionalProperties"] is False and SCHEMA["additionalProperties"] is False
    assert sorted(operation["required"]) == sorted(Operation.model_fields)
    assert operation["properties"]["op"]["enum"] == list(get_args(OpName))
    assert operation["properties"]["type"]["enum"] == list(get_args(FactType))
    assert set(get_args(FactType)) <= {t.value for t in ItemType}


def test_a_json_object_answer_is_read_leniently_where_the_meaning_is_clear():
    operations = [{"op": "add", "text": "The user is 30."}, {"op": "delete", "id": 2, "type": ""}]
    said = f"```json\n{json.dumps({'operations': operations})}\n```"
    assert parse_operations(said) == [
        Operation(op="ADD", id="", type="fact", text="The user is 30."),
        Operation(op="DELETE", id="2", type="fact", text=""),
    ]


# -- failures and switches ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (llm_down(), "HTTP 503"),
        (text("Sure! The user has a sister."), "not JSON"),
        (answer(op("ADD", "", "fact", "ok"), op("ADD", "", "fact", "")), "schema"),
        (answer(op("MERGE", "1", "fact", "x")), "schema"),
        (text(json.dumps({"facts": [SECRET]})), "schema"),
        (5.0, "no answer within 0.2s"),
    ],
)
async def test_a_failed_call_stores_nothing_and_logs_one_line_without_the_users_words(
    reply, reason, caplog
):
    home = item(ItemType.IDENTITY, "The user lives in Porto.", "823ac60cc4")
    target = FakeTarget(home)
    extract = extractor(ScriptedLlm(reply), target, Settings(extraction_timeout_seconds=0.2))
    caplog.set_level(logging.INFO, logger="bot.memory")
    extract.submit("u", SECRET, "turn:1")
    await extract.drain()
    assert target.changes == [] and list(target.items) == ["823ac60cc4"]
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert reason in warning.getMessage() and "Olga" not in caplog.text


async def test_nothing_is_sent_while_memory_is_disabled_or_extraction_is_rules():
    llm, target = ScriptedLlm(), FakeTarget()
    for settings in (Settings(enabled=False), Settings(extraction="rules")):
        extract = extractor(llm, target, settings)
        extract.submit("u", SECRET, "turn:1")
        await extract.drain()
    assert llm.requests == [] and target.changes == []


async def test_memory_turned_off_while_a_batch_waits_sends_nothing():
    settings = Settings(extraction_batch_seconds=0.1)
    llm = ScriptedLlm()
    extract = extractor(llm, FakeTarget(), settings)
    extract.submit("u", SECRET, "turn:1")
    settings.memory["enabled"] = False
    await extract.drain()  # the waiting batch is due now, and its worker has ended
    assert llm.requests == []


async def test_discard_drops_waiting_messages_and_the_answer_on_its_way():
    llm = ScriptedLlm(0.3, answer(op("ADD", "", "fact", "The user's sister Olga lives in Porto.")))
    target = FakeTarget()
    extract = extractor(llm, target)
    extract.submit("u", SECRET, "turn:1")
    await wait_until(lambda: len(llm.requests) == 1, what="the call is under way")
    await extract.discard("u")  # returns once the worker waiting for the answer has ended
    await extract.drain()
    assert target.changes == []


# -- bounds ----------------------------------------------------------------------------------


async def test_a_users_backlog_is_bounded_and_the_oldest_go_with_one_line(caplog):
    llm = ScriptedLlm(NONE)
    extract = extractor(
        llm, FakeTarget(), Settings(extraction_max_messages=10), max_pending_per_user=3
    )
    for n in range(6):
        extract.submit("u", f"message {n}", f"turn:{n}")
    await extract.drain()
    assert shown_to_model(llm.requests[0])[1] == ["message 3", "message 4", "message 5"]
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "dropped the 3 oldest messages" in warning.getMessage()


async def test_the_number_of_users_waiting_is_bounded(caplog):
    llm = ScriptedLlm(NONE, NONE, NONE)
    extract = extractor(
        llm, FakeTarget(), Settings(extraction_batch_seconds=0.05), max_users_pending=2
    )
    for user in ("a", "b", "c"):
        extract.submit(user, f"{user} says hello there", "t")
    await extract.drain()
    assert sorted(shown_to_model(r)[1][0][0] for r in llm.requests) == ["b", "c"]
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "dropped 1 messages of one user" in warning.getMessage()


async def test_a_huge_message_is_cut_before_it_waits():
    llm = ScriptedLlm(NONE)
    extract = extractor(llm, FakeTarget())
    extract.submit("u", "x" * 100_000, "t")
    await extract.drain()
    assert len(shown_to_model(llm.requests[0])[1][0]) == 2000
