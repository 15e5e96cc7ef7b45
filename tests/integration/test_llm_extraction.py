"""LLM fact extraction end to end: the real `openai` client against a local OpenAI-compatible
server playing the model, and the real JSONL memory in a temp folder."""

import json
import re

import pytest

from bot.adapters.openai_llm import OpenAiLlm
from bot.config.model import LlmConfig, MemoryConfig, RuntimeConfig
from bot.memory.file_repository import file_memory
from bot.memory.llm_extraction import LlmFactExtractor
from bot.memory.llm_operations import SCHEMA
from tests.fakes.openai_server import FakeOpenAiServer, Reply


def play_the_model(body: dict) -> Reply:
    """A tiny extraction model: knows where the user lives and notices when they move."""
    question = body["messages"][-1]["content"]
    memories = json.loads(re.search(r"^Memories: (.*)$", question, re.M)[1])
    said = " ".join(json.loads(re.search(r"^Messages: (.*)$", question, re.M)[1]))
    home = next((m["id"] for m in memories if "lives in" in m["text"]), "")
    city = re.search(r"(?:live in|moved to) (\w+)", said)
    if city is None or any(city[1] in m["text"] for m in memories):
        operation = {"op": "NONE", "id": "", "type": "fact", "text": ""}
    else:
        fact = f"The user lives in {city[1]}."
        op = "UPDATE" if home else "ADD"
        operation = {"op": op, "id": home, "type": "identity", "text": fact}
    return Reply(text=json.dumps({"operations": [operation]}))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAiServer(play_the_model) as fake:
        yield fake


@pytest.fixture
async def llm(server):
    server.requests.clear()
    server._script.clear()
    adapter = OpenAiLlm.connect("sk-test", server.base_url)
    yield adapter
    await adapter.close()


def settings(extraction: str):
    config = RuntimeConfig(
        llm=LlmConfig(model="fake-model", retry_attempts=2, retry_max_seconds=1),
        memory=MemoryConfig(extraction=extraction, extraction_batch_seconds=0),
    )
    return lambda: config


async def turn(memory, extractor, said: str, number: int, rules: bool) -> None:
    """What the persist system does after a reply: rules (unless `llm`), then the LLM."""
    if rules:
        await memory.remember_exchange("u", said, "Noted.", f"turn:{number}")
    extractor.submit("u", said, f"turn:{number}")
    await extractor.drain()


@pytest.mark.parametrize("extraction", ["llm", "both"])
async def test_moving_house_leaves_one_home_saying_berlin(extraction, llm, server, tmp_path):
    config = settings(extraction)
    memory = file_memory(tmp_path / "memory", lambda: config().memory)
    extractor = LlmFactExtractor(llm, config, memory)
    rules = extraction == "both"
    await turn(memory, extractor, "I live in Porto", 1, rules)
    await turn(memory, extractor, "I moved to Berlin last month", 2, rules)

    (home,) = [f for f in (await memory.overview("u")).facts if "lives in" in f.content]
    assert home.content == "The user lives in Berlin."
    reopened = file_memory(memory.repository.root, lambda: config().memory)
    assert [f.content for f in (await reopened.overview("u")).facts] == [home.content]

    first, second = server.requests
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "memory_operations", "schema": SCHEMA, "strict": True},
    }
    assert "stream" not in first and first["temperature"] == 0
    assert "The user lives in Porto." in second["messages"][-1]["content"]
    assert home.id not in second["messages"][-1]["content"]


async def test_a_server_without_json_schema_is_asked_for_a_json_object(llm, server, tmp_path):
    config = settings("llm")
    memory = file_memory(tmp_path / "memory", lambda: config().memory)
    extractor = LlmFactExtractor(llm, config, memory)
    refusal = "'response_format.type' must be 'json_object' or 'text'"
    server.script(Reply(status=400, error_message=refusal))
    await turn(memory, extractor, "I live in Porto", 1, rules=False)
    await turn(memory, extractor, "I moved to Berlin", 2, rules=False)

    formats = [body["response_format"] for body in server.requests]
    assert formats[0]["type"] == "json_schema"
    assert formats[1:] == [{"type": "json_object"}] * 2
    assert "JSON" in server.requests[1]["messages"][0]["content"]  # json_object requires it
    assert [f.content for f in (await memory.overview("u")).facts] == ["The user lives in Berlin."]


async def test_a_failing_server_stores_nothing_and_keeps_what_the_rules_found(
    llm, server, tmp_path, caplog
):
    config = settings("both")
    memory = file_memory(tmp_path / "memory", lambda: config().memory)
    extractor = LlmFactExtractor(llm, config, memory)
    server.script(Reply(status=503), Reply(status=503))
    await turn(memory, extractor, "I live in Porto", 1, rules=True)

    assert [f.content for f in (await memory.overview("u")).facts] == ["The user lives in Porto."]
    warnings = [r.getMessage() for r in caplog.records if r.name == "bot.memory.llm_extraction"]
    assert len(warnings) == 1 and "HTTP 503" in warnings[0] and "Porto" not in warnings[0]
