"""Short-term memory through the whole app: real openai client, real files, local LLM server."""

import json
import re

import pytest

from bench.memory_eval_data import load_eval_set
from bench.memory_generalisation import questions_of, run_conversation
from bench.memory_recall import FACTS, TARGET_AT_6, evaluate, memory_lines
from bot.conversation import IncomingFile, IncomingMessage
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, BOB, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply
from tests.fakes.untrusted import fences


def last_system_prompt(fake_llm):
    return fake_llm.system_prompts()[-1]


async def test_a_fact_from_one_session_is_in_memory_after_new(app, fake_llm, settings):
    channel = RecordingChannel()
    fake_llm.script(Reply(text="Noted: your staging server is at 10.0.0.5."))
    await app.handle(say(ALICE, "Remember that my staging server is at 10.0.0.5."), channel)
    await app.handle(say(ALICE, "/new"), channel)
    await app.handle(say(ALICE, "What's the IP of my staging server?"), channel)

    prompt = last_system_prompt(fake_llm)
    lines = memory_lines(prompt)
    assert lines and "The user's staging server is at 10.0.0.5." in lines[0]
    assert prompt.index("# Memory") < prompt.index("# Available Tools")
    request = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in request] == ["system", "user"], "the session itself is fresh"

    await app.memory.drain()
    semantic = list((settings.data_dir / "memory").glob("u-*/semantic.jsonl"))
    assert len(semantic) == 1
    (stored,) = [json.loads(line) for line in semantic[0].read_text().splitlines()]
    assert stored["layer"] == "semantic" and stored["confidence"] >= 0.9


async def test_another_users_prompt_never_holds_alices_memory(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "My name is Alice and my server is at 10.0.0.5."), channel)
    await app.handle(say(BOB, "What is my name and where is my server?"), channel)
    assert memory_lines(last_system_prompt(fake_llm)) == []
    assert "10.0.0.5" not in json.dumps(fake_llm.requests[-1])
    await app.handle(say(ALICE, "Where is my server?"), channel)
    assert "10.0.0.5" in last_system_prompt(fake_llm)


async def test_remember_off_stores_nothing_new_until_on(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/remember off"), channel)
    await app.handle(say(ALICE, "My name is Alice."), channel)
    await app.memory.drain()
    assert await app.memory.count_for("user-alice") == 0
    await app.handle(say(ALICE, "/status"), channel)
    assert "Remembering: off for you (/remember on resumes)" in channel.texts()[-1]
    await app.handle(say(BOB, "/status"), channel)
    assert "Remembering" not in channel.texts()[-1], "only the user who turned it off"
    await app.handle(say(ALICE, "/remember on"), channel)
    await app.handle(say(ALICE, "/status"), channel)
    assert "Remembering" not in channel.texts()[-1]
    await app.handle(say(ALICE, "My name is Alice."), channel)
    await app.memory.drain()
    assert await app.memory.count_for("user-alice") == 1


async def test_remember_off_says_what_it_still_keeps_and_that_is_what_it_keeps(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/remember off"), channel)
    said = channel.texts()[-1]
    assert "I still keep our conversation itself" in said and "/forget all deletes it" in said
    await app.handle(say(ALICE, "My name is Alice."), channel)
    await app.memory.drain()
    assert await app.memory.count_for("user-alice") == 0, "nothing added to memory"
    session = await app.sessions.load(ALICE.session_key)
    assert session.messages[0].content == "My name is Alice.", "the conversation"
    await app.handle(say(ALICE, "/forget all"), channel)
    await app.handle(say(ALICE, "/forget confirm"), channel)
    assert await app.sessions.count_for("user-alice") == 0


async def test_memory_commands_through_the_app(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "I prefer green tea."), channel)
    await app.handle(say(ALICE, "/memory"), channel)
    assert "The user prefers green tea." in channel.texts()[-1]
    await app.handle(say(ALICE, "/forget all"), channel)
    assert "/forget confirm" in channel.texts()[-1]
    await app.handle(say(ALICE, "/forget confirm"), channel)
    assert channel.texts()[-1].startswith("Done: deleted 1 short-term memory items")
    await app.handle(say(ALICE, "What tea do I like?"), channel)
    assert memory_lines(last_system_prompt(fake_llm)) == []
    assert len(fake_llm.requests) == 2, "commands never reach the LLM"


async def test_the_llm_can_use_the_memory_tool(app, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[("memory", '{"action": "add", "text": "The user parks in spot B12."}')]),
        Reply(text="I'll remember your parking spot."),
    )
    channel = RecordingChannel()
    await app.handle(say(ALICE, "Keep in mind where I park: spot B12."), channel)
    assert channel.texts() == ["I'll remember your parking spot."]
    assert "Remembered:" in fake_llm.requests[1]["messages"][-1]["content"]
    await app.handle(say(ALICE, "/new"), channel)
    await app.handle(say(ALICE, "Where do I park?"), channel)
    assert "spot B12" in last_system_prompt(fake_llm)


async def test_memory_disabled_in_runtime_config_means_no_section_and_no_writes(
    app, fake_llm, settings
):
    edit_runtime_config(settings.runtime_config_path, memory={"enabled": False})
    channel = RecordingChannel()
    await app.handle(say(ALICE, "My name is Alice."), channel)
    await app.handle(say(ALICE, "What is my name?"), channel)
    await app.memory.drain()
    assert memory_lines(last_system_prompt(fake_llm)) == []
    assert await app.memory.count_for("user-alice") == 0


async def test_recall_at_6_of_planted_facts_meets_the_target(tmp_path):
    report = await evaluate(tmp_path)
    assert report.questions == len(FACTS) >= 30
    assert report.recall_at(6) >= TARGET_AT_6, report.misses_at_6
    assert report.recall_at(1) <= report.recall_at(3) <= report.recall_at(6)


def extraction_model(body: dict) -> Reply:
    """Chat turns are echoed; the extraction call (a JSON-schema request) finds the sister."""
    if "response_format" not in body:
        return Reply(text="Thanks for telling me, I'll keep that in mind.")
    said = body["messages"][-1]["content"]
    operations = []
    if "sister Olga" in said:
        text = "The user's sister Olga lives in Porto."
        operations = [{"op": "ADD", "id": "", "type": "fact", "text": text}]
    return Reply(text=json.dumps({"operations": operations}))


async def test_llm_extraction_captures_a_fact_the_rules_miss(app, fake_llm, settings):
    fake_llm.responder = extraction_model
    edit_runtime_config(
        settings.runtime_config_path,
        memory={"extraction": "llm", "extractionBatchSeconds": 0},
    )
    channel = RecordingChannel()
    await app.handle(say(ALICE, "btw my sister Olga lives in Porto"), channel)
    await app.extractor.drain()
    await app.handle(say(ALICE, "/new"), channel)
    await app.handle(say(ALICE, "where does my sister live?"), channel)

    chat = [body for body in fake_llm.requests if "response_format" not in body]
    lines = memory_lines(chat[-1]["messages"][0]["content"])
    assert any(line.startswith("- #") and "sister Olga lives in Porto" in line for line in lines)
    schema_requests = [body for body in fake_llm.requests if "response_format" in body]
    assert len(schema_requests) >= 1
    assert schema_requests[0]["response_format"]["type"] == "json_schema"


async def test_forget_all_drops_messages_still_waiting_for_extraction(app, fake_llm, settings):
    fake_llm.responder = extraction_model
    edit_runtime_config(
        settings.runtime_config_path,
        memory={"extraction": "llm", "extractionBatchSeconds": 30},
    )
    channel = RecordingChannel()
    await app.handle(say(ALICE, "btw my sister Olga lives in Porto"), channel)
    await app.handle(say(ALICE, "/forget all"), channel)
    await app.handle(say(ALICE, "/forget confirm"), channel)
    await app.extractor.drain()
    await app.memory.drain()
    assert await app.memory.count_for("user-alice") == 0
    assert not [body for body in fake_llm.requests if "response_format" in body]


@pytest.mark.parametrize(
    ("fact", "question", "answer"),
    [
        (
            "my wife Anna works as a pediatrician at the city hospital",
            "what does my spouse do for a living?",
            "pediatrician",
        ),
        (
            "I bought a used Yamaha piano last month",
            "which instrument did I get recently?",
            "Yamaha",
        ),
    ],
)
async def test_the_bundled_model_finds_a_fact_asked_in_other_words(
    app, fake_llm, settings, fact, question, answer
):
    channel = RecordingChannel()
    for said in (fact, "I go climbing twice a week", "our server runs Proxmox", "/new", question):
        await app.handle(say(ALICE, said), channel)
    assert answer in memory_lines(last_system_prompt(fake_llm))[0]

    edit_runtime_config(settings.runtime_config_path, memory={"embeddings": {"provider": "off"}})
    await app.handle(say(ALICE, question), channel)
    assert not any(answer in line for line in memory_lines(last_system_prompt(fake_llm)))


async def test_generalisation_set_meaning_finds_paraphrases_that_words_cannot(tmp_path):
    """A regression guard on the dev split of the held-out set (figures: bench)."""
    data = load_eval_set()
    questions = questions_of(data.split("dev"), "paraphrase")
    words = await run_conversation(tmp_path / "words", data, questions, "off")
    meaning = await run_conversation(tmp_path / "meaning", data, questions, "embedded")
    assert words.recall < 0.15
    assert meaning.recall >= 0.85  # 0.92 measured; a question of 38 varies run to run
    assert meaning.junk_share <= 0.05


def shared(address, file_name, text, caption=""):
    """A message carrying a document, as a channel hands it over (label, then caption)."""
    document = IncomingFile(file_name, "text/plain", text.encode())
    label = f"{document.label} {caption}".strip()
    return IncomingMessage(address, f"user-{address.chat_id}", label, file=document)


TRIP = (
    "Trip plan for Lisbon. Day one: the ferry to Cacilhas leaves Cais do Sodre at 09:40, "
    "lunch at Ponto Final. Day two: the tram 28 to Graca, then the tile museum, closed on "
    "Mondays. The hotel booking reference is QX-4471-LIS, breakfast from 7 to 10."
)


async def test_a_document_is_recalled_after_new_and_gone_once_forgotten(app, fake_llm):
    """The default config (no LightRAG): the text goes to short-term memory, fenced in the
    prompt as a document's; `/forget <its id>` deletes it for good."""
    channel = RecordingChannel()
    await app.handle(shared(ALICE, "lisbon.txt", TRIP), channel)
    said = channel.texts()[-1]
    assert "It's in my memory now" in said
    note_id = re.search(r"/forget ([0-9a-f]+) deletes it", said).group(1)
    await app.handle(say(ALICE, "/new"), channel)
    await app.handle(say(ALICE, "What is my hotel booking reference in Lisbon?"), channel)
    prompt = last_system_prompt(fake_llm)
    assert any("QX-4471-LIS" in line for line in memory_lines(prompt))
    [body] = [body for kind, body in fences(prompt) if kind == "document"]
    assert "QX-4471-LIS" in body and f"#{note_id}0001]" in body
    assert "# Untrusted Content" in prompt
    await app.handle(say(ALICE, "/memory hotel booking Lisbon"), channel)
    listing = channel.texts()[-1]
    assert "Parts of shared documents:" in listing and f"#{note_id}0001" in listing

    await app.handle(say(ALICE, f"/forget {note_id}"), channel)
    assert "Also deleted the document's text (1 part)." in channel.texts()[-1]
    await app.handle(say(ALICE, "What is my hotel booking reference in Lisbon?"), channel)
    assert "QX-4471-LIS" not in last_system_prompt(fake_llm)
    await app.memory.drain()
    assert await app.memory.count_for("user-alice") == 1, "the exchange just asked, alone"


async def test_forgetting_a_fact_forgets_the_snippets_that_hold_its_words(app, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE, "btw my sister Olga lives in Porto and paints tiles"), channel)
    await app.memory.drain()
    await app.handle(say(ALICE, "/memory sister Porto"), channel)
    listing = channel.texts()[-1]
    assert "Facts:" in listing and "Conversation snippets:" in listing
    fact_id = re.search(r"#([0-9a-f]+) The user's sister Olga lives in Porto", listing).group(1)
    await app.handle(say(ALICE, f"/forget {fact_id}"), channel)
    reply = channel.texts()[-1]
    assert reply.startswith("Forgotten: The user's sister Olga lives in Porto")
    assert "Also deleted 1 conversation snippet that held the same words" in reply
    await app.handle(say(ALICE, "/new"), channel)
    await app.handle(say(ALICE, "Where does my sister live?"), channel)
    assert "Porto" not in last_system_prompt(fake_llm)
    await app.handle(say(ALICE, "/memory sister Porto"), channel)
    assert "Porto" not in channel.texts()[-1].split("\n", 1)[1], "only the question just asked"
    await app.handle(say(ALICE, "/memory Olga tiles"), channel)
    assert not re.search("Olga|tiles|Porto", channel.texts()[-1].split("\n", 1)[1])
