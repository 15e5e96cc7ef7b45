"""The whole bot with long-term memory on: a real LightRAG server, a local LLM, real files."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingFile, IncomingMessage
from bot.rag.documents import owner_tag_of, tag
from tests.conftest import edit_runtime_config
from tests.fakes.channel import RecordingChannel
from tests.fakes.lightrag_server import LightRagServer
from tests.fakes.openai_server import Reply
from tests.fakes.skills import write_skill

RAG_KEY = "e2e-rag-key-7731"


@pytest.fixture
def lightrag(rag_llm, tmp_path):
    server = LightRagServer(tmp_path / "lightrag", rag_llm.base_url, api_key=RAG_KEY).start()
    yield server
    server.stop()


@pytest.fixture
async def rag_app(settings, fake_llm, lightrag):
    settings.openai_base_url = fake_llm.base_url
    settings.rag_api_key = RAG_KEY
    # `# Memory` off: what these tests look for would be there too, and `# Relevant Memory`
    # leaves out what `# Memory` holds (`bot/rag/relevance.py`; the last test has both on).
    edit_runtime_config(
        settings.runtime_config_path,
        memory={"enabled": False},
        rag={
            "enabled": True,
            "url": lightrag.url,
            "indexRetryMaxSeconds": 1,
            "circuitCooldownSeconds": 1,
            "timeoutSeconds": 5,
        },
    )
    built = BotApp.build(settings)
    await built.start()
    yield built
    await built.aclose()


def say(user: str, text: str, operator: bool = False) -> IncomingMessage:
    return IncomingMessage(ChatAddress("test", f"chat-{user}"), user, text, operator=operator)


async def wait_indexed(rag_app: BotApp, server: LightRagServer, count: int) -> None:
    for _ in range(600):
        if rag_app.indexer.queue.depth == 0:
            break
        await asyncio.sleep(0.05)
    await asyncio.to_thread(server.wait_until_processed, count)


def relevant_memory(prompt: str) -> str:
    """The body of the `# Relevant Memory` section of a system prompt."""
    heading = "\n# Relevant Memory\n"
    assert heading in prompt, prompt
    return prompt.split(heading, 1)[1].split("\n# ", 1)[0]


@pytest.mark.parametrize("style", ["context", "answer"])
async def test_a_fact_told_before_new_is_in_the_prompt_after_it(
    rag_app, settings, fake_llm, lightrag, style
):
    edit_runtime_config(settings.runtime_config_path, rag={"retrievalStyle": style})
    channel = RecordingChannel()
    await rag_app.handle(
        say("501", "My Grafana dashboard lives on port 3917 behind Caddy."), channel
    )
    await wait_indexed(rag_app, lightrag, 1)
    await rag_app.handle(say("501", "/new"), channel)
    await rag_app.handle(say("501", "Which port does my Grafana dashboard use?"), channel)

    prompt = fake_llm.system_prompts()[-1]
    assert "3917" in relevant_memory(prompt)
    assert prompt.index("\n# Relevant Memory\n") < prompt.index("\n# Available Tools\n")
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"], "the session really was new"
    assert channel.texts()[-1] == "echo: Which port does my Grafana dashboard use?"


async def test_another_users_fact_never_reaches_the_prompt(rag_app, fake_llm, lightrag):
    channel = RecordingChannel()
    await rag_app.handle(say("601", "My locker combination at the Lisbon gym is 2468."), channel)
    await wait_indexed(rag_app, lightrag, 1)
    await rag_app.handle(say("602", "What is the locker combination at the Lisbon gym?"), channel)
    assert "2468" not in fake_llm.system_prompts()[-1]
    assert "\n# Relevant Memory\n" not in fake_llm.system_prompts()[-1]
    await rag_app.handle(say("601", "What is the locker combination at the Lisbon gym?"), channel)
    assert "2468" in relevant_memory(fake_llm.system_prompts()[-1])


async def test_exchanges_during_an_outage_are_indexed_after_the_server_returns(
    rag_app, fake_llm, lightrag
):
    channel = RecordingChannel()
    await rag_app.handle(
        say("701", "Before the outage: our staging cluster is named Tern."), channel
    )
    await wait_indexed(rag_app, lightrag, 1)

    lightrag.kill()
    outage = [
        "During the outage: the backup job runs at 02:15 every night.",
        "During the outage: the VPN gateway address is 10.8.0.1 for everyone.",
        "During the outage: Marta owns the billing service on-call rotation.",
    ]
    for text in outage:
        started = time.monotonic()
        await rag_app.handle(say("701", text), channel)
        assert time.monotonic() - started < 3, "a turn must not wait on a dead LightRAG"
    assert channel.texts()[-3:] == [f"echo: {text}" for text in outage]
    assert rag_app.indexer.queue.depth == 3

    await asyncio.to_thread(lightrag.start)
    await wait_indexed(rag_app, lightrag, 4)
    tags = [owner_tag_of(s) for s in lightrag.file_sources()]
    assert tags.count("701") == 4

    await rag_app.handle(say("701", "When does the backup job run every night?"), channel)
    assert "02:15" in relevant_memory(fake_llm.system_prompts()[-1])


async def test_status_shows_health_queue_and_documents(rag_app, lightrag):
    channel = RecordingChannel()
    await rag_app.handle(
        say("801", "Please remember that the staging database is on port 5544."), channel
    )
    await wait_indexed(rag_app, lightrag, 1)
    await rag_app.handle(say("801", "/status", operator=True), channel)
    status = channel.texts()[-1]
    assert f"LightRAG: healthy at {lightrag.url} (context style, hybrid mode)" in status
    assert "Your long-term documents: 1" in status
    assert "Index queue: 0 waiting" in status
    assert RAG_KEY not in status
    await rag_app.handle(say("801", "/status"), channel)
    assert "LightRAG: healthy (context style, hybrid mode)" in channel.texts()[-1]
    assert lightrag.url not in channel.texts()[-1], "the server's address is for operators"

    lightrag.kill()
    await rag_app.handle(say("801", "Which port is the staging database on again?"), channel)
    await rag_app.handle(say("801", "/status", operator=True), channel)
    assert "circuit open" in channel.texts()[-1] or "unreachable" in channel.texts()[-1]
    await rag_app.handle(say("801", "/status"), channel)
    assert "LightRAG: not available (context style" in channel.texts()[-1]


async def test_forget_all_deletes_long_term_documents_after_confirmation(
    rag_app, fake_llm, lightrag
):
    channel = RecordingChannel()
    await rag_app.handle(
        say("901", "My bicycle lock code at the Utrecht station is 8080."), channel
    )
    await rag_app.handle(say("902", "My Utrecht station locker is number 12 on the left."), channel)
    await wait_indexed(rag_app, lightrag, 2)

    await rag_app.handle(say("901", "/forget all"), channel)
    assert "1 long-term documents (LightRAG)" in channel.texts()[-1]
    assert [owner_tag_of(s) for s in lightrag.file_sources()].count("901") == 1, "not yet"
    await rag_app.handle(say("901", "/forget confirm"), channel)
    assert "deleted" in channel.texts()[-1] and "1 long-term documents" in channel.texts()[-1]
    assert "LightRAG's cache may still hold summaries" in channel.texts()[-1], "said plainly"

    for _ in range(100):
        tags = [owner_tag_of(s) for s in lightrag.file_sources()]
        if "901" not in tags:
            break
        await asyncio.sleep(0.2)
    assert "901" not in tags and "902" in tags
    await rag_app.handle(say("901", "What is my bicycle lock code at Utrecht station?"), channel)
    assert "8080" not in fake_llm.system_prompts()[-1]


async def test_a_group_recalls_its_own_conversations_never_a_members_private_ones(
    rag_app, fake_llm, lightrag
):
    group = ChatAddress("test", "-100555")

    def in_group(user: str, text: str) -> IncomingMessage:
        return IncomingMessage(group, user, text, user_name=f"U{user}", in_group=True)

    channel = RecordingChannel()
    await rag_app.handle(say("1101", "My locker PIN at the Harbour gym is 7319, keep it."), channel)
    await rag_app.handle(
        in_group("1101", "The team offsite is booked at the Linden Lodge."), channel
    )
    await wait_indexed(rag_app, lightrag, 2)
    owners = {owner_tag_of(s) for s in lightrag.file_sources()}
    assert owners == {"1101", tag("group:test:-100555")}, "the group's exchange is the group's"

    await rag_app.handle(in_group("1101", "What is my locker PIN at the Harbour gym?"), channel)
    assert "7319" not in fake_llm.system_prompts()[-1], "the whole group reads this reply"
    await rag_app.handle(in_group("1102", "Where is the team offsite booked?"), channel)
    assert "Linden Lodge" in relevant_memory(fake_llm.system_prompts()[-1])
    await rag_app.handle(say("1101", "Where is the team offsite booked?"), channel)
    assert "Linden" not in fake_llm.system_prompts()[-1], "the group's stays in the group"


async def test_in_answer_style_a_group_never_reads_its_only_members_private_memory(
    rag_app, settings, fake_llm, lightrag
):
    """One allowed user, so `answer` style is allowed in private; LightRAG's own LLM would
    answer a group's question from that user's private documents, which the bot cannot
    filter: a group is asked in `context` style, its own documents only."""
    edit_runtime_config(
        settings.runtime_config_path,
        rag={"retrievalStyle": "answer"},
        telegram={"allowedUsers": [1301]},
    )
    group = ChatAddress("test", "-100777")
    channel = RecordingChannel()
    await rag_app.handle(say("1301", "My bank card PIN is 4321, keep it safe."), channel)
    await wait_indexed(rag_app, lightrag, 1)
    await rag_app.handle(say("1301", "What is my bank card PIN?"), channel)
    assert "4321" in relevant_memory(fake_llm.system_prompts()[-1]), "answer style in private"

    asked = IncomingMessage(group, "1301", "What is my bank card PIN?", in_group=True)
    await rag_app.handle(asked, channel)
    assert "4321" not in fake_llm.system_prompts()[-1], "the whole group reads this reply"


async def test_a_skill_the_model_activates_is_in_the_next_prompt_and_the_indexed_exchange(
    rag_app, settings, fake_llm, lightrag
):
    write_skill(
        settings.skills_dir,
        "garden-helper",
        "Plans vegetable gardens. Use for sowing and planting questions.",
        "Ask for the user's climate zone first. Give sowing dates as month ranges.",
    )
    fake_llm.script(
        Reply(tool_calls=[("skill", '{"action": "activate", "name": "garden-helper"}')]),
        Reply(text="Sow the tomatoes indoors in March, then plant them out in late May."),
    )
    channel = RecordingChannel()
    await rag_app.handle(say("1201", "When should I sow tomatoes on my balcony in Porto?"), channel)

    before, after = fake_llm.system_prompts()[-2:]
    assert "\n# Active Skill" not in before
    assert "- garden-helper: Plans vegetable gardens." in before, "the catalogue"
    assert "\n# Active Skill: garden-helper\nAsk for the user's climate zone first." in after
    assert after.index("\n# Active Skill: ") < after.index("\n# Available Tools\n")
    assert channel.texts()[-1].startswith("Sow the tomatoes indoors in March")

    await wait_indexed(rag_app, lightrag, 1)
    (summary,) = lightrag.content_summaries()
    lines = summary.splitlines()
    assert lines[0].startswith("Date: ") and lines[1] == "Skill: garden-helper"
    assert lines[2] == "User: When should I sow tomatoes on my balcony in Porto?"

    await rag_app.handle(say("1201", "And peppers, when do they go out?"), channel)
    assert "\n# Active Skill: garden-helper\n" in fake_llm.system_prompts()[-1], "kept"
    await rag_app.handle(say("1201", "/new"), channel)
    await rag_app.handle(say("1201", "What about basil on the same balcony in Porto?"), channel)
    assert "\n# Active Skill" not in fake_llm.system_prompts()[-1], "/new clears it"


async def test_forgetting_a_fact_deletes_the_conversations_that_said_it_on_the_server(
    rag_app, settings, fake_llm, lightrag
):
    edit_runtime_config(settings.runtime_config_path, memory={"enabled": True})
    channel = RecordingChannel()
    await rag_app.handle(
        say("951", "Remember that my bicycle lock code is 8080 at Utrecht station."), channel
    )
    await rag_app.handle(say("951", "We deploy the billing service every Friday at noon."), channel)
    await rag_app.handle(
        say("952", "Remember that my bicycle lock code is 4242 at Utrecht station."), channel
    )
    await wait_indexed(rag_app, lightrag, 3)
    await rag_app.memory.drain()
    (fact,) = [f for f in (await rag_app.memory.overview("951")).facts if "bicycle" in f.content]

    await rag_app.handle(say("951", f"/forget {fact.id}"), channel)
    reply = channel.texts()[-1]
    assert "Also deleted 1 conversation snippet" in reply
    assert "Deleted 1 document holding them from long-term memory (LightRAG) too." in reply
    assert "in the descriptions of names they share" in reply, "what remains, said plainly"
    for _ in range(100):
        tags = [owner_tag_of(s) for s in lightrag.file_sources()]
        if tags.count("951") == 1:
            break
        await asyncio.sleep(0.2)
    assert tags.count("951") == 1 and tags.count("952") == 1, "the other talk, and Bob's, stay"
    long_term = next(s for s in rag_app.memory_stores if "LightRAG" in s.label)
    assert await long_term.count_for("951") == 1, "the ledger forgot the deleted one"
    await rag_app.handle(say("951", "What is my bicycle lock code at Utrecht station?"), channel)
    assert "8080" not in fake_llm.system_prompts()[-1]


async def test_the_model_forgetting_a_fact_through_its_tool_deletes_it_on_the_server_too(
    rag_app, settings, fake_llm, lightrag
):
    """Users say "forget my lock code" in words: the model calls its memory tool, and the
    conversation that said it goes from LightRAG as it does for `/forget <id>`."""
    edit_runtime_config(settings.runtime_config_path, memory={"enabled": True})
    channel = RecordingChannel()
    await rag_app.handle(
        say("961", "Remember that my bicycle lock code is 8080 at Utrecht station."), channel
    )
    await rag_app.handle(say("961", "We deploy the billing service every Friday at noon."), channel)
    await wait_indexed(rag_app, lightrag, 2)
    await rag_app.memory.drain()
    (fact,) = [f for f in (await rag_app.memory.overview("961")).facts if "bicycle" in f.content]

    forget = json.dumps({"action": "forget", "item_id": fact.id})
    fake_llm.script(Reply(tool_calls=[("memory", forget)]), Reply(text="Done, it is forgotten."))
    await rag_app.handle(say("961", "Please forget my bicycle lock code."), channel)
    result = next(m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool")
    assert result.startswith("Forgot: ") and "bicycle" in result
    assert "Also deleted 1 conversation(s) holding it from long-term memory" in result
    for _ in range(100):
        tags = [owner_tag_of(s) for s in lightrag.file_sources()]
        if tags.count("961") == 1:
            break
        await asyncio.sleep(0.2)
    assert tags.count("961") == 1, "the deploy talk stays, the lock code's is gone"
    await rag_app.handle(say("961", "What is my bicycle lock code at Utrecht station?"), channel)
    assert "8080" not in fake_llm.system_prompts()[-1], "nor in a name's description"
    await rag_app.handle(say("961", "When do we deploy the billing service?"), channel)
    assert "every Friday at noon" in fake_llm.system_prompts()[-1]


async def test_a_document_with_lightrag_on_is_in_the_prompt_once_and_forgotten_in_both(
    rag_app, settings, fake_llm, lightrag
):
    edit_runtime_config(settings.runtime_config_path, memory={"enabled": True})
    channel = RecordingChannel()
    text = (
        "Boat maintenance log. The mooring at Doca de Alcantara costs 310 euros a year and "
        "the harbour master is called Ines Barros. Antifouling paint is applied every April."
    )
    document = IncomingFile("boat.txt", "text/plain", text.encode())
    message = IncomingMessage(ChatAddress("test", "chat-971"), "971", document.label, file=document)
    await rag_app.handle(message, channel)
    note_id = re.search(r"/forget ([0-9a-f]+) deletes it", channel.texts()[-1]).group(1)
    await wait_indexed(rag_app, lightrag, 1)
    await rag_app.handle(say("971", "/new"), channel)
    await rag_app.handle(say("971", "Who is the harbour master at Doca de Alcantara?"), channel)
    prompt = fake_llm.system_prompts()[-1]
    # The same words never twice: `# Relevant Memory` leaves out what `# Memory` holds (the
    # document's part), and `# Memory` a part LightRAG's block still holds.
    assert prompt.count("harbour master is called Ines Barros") == 1, prompt

    await rag_app.handle(say("971", f"/forget {note_id}"), channel)
    reply = channel.texts()[-1]
    assert "Also deleted the document's text (1 part)." in reply
    assert "Deleted 1 document holding them from long-term memory (LightRAG) too." in reply
    for _ in range(100):
        if not [s for s in lightrag.file_sources() if s.startswith("doc_")]:
            break
        await asyncio.sleep(0.2)
    assert not [s for s in lightrag.file_sources() if s.startswith("doc_")]
    await rag_app.handle(say("971", "Who is the harbour master at Doca de Alcantara?"), channel)
    prompt = fake_llm.system_prompts()[-1]
    assert "Ines Barros" not in prompt.split("# Relevant Memory", 1)[0], "# Memory"
    if "\n# Relevant Memory\n" in prompt:
        conversations = relevant_memory(prompt).split("Related facts:", 1)[0]
        assert "Ines Barros" not in conversations, "the document's own text is gone"
    # What remains: LightRAG's graph keeps descriptions its model drew from the document for
    # names the later question shares ("Doca", "Alcantara"), and the reply said so.
    assert "in the descriptions of names they share" in reply


async def test_relevant_memory_leaves_out_what_memory_holds(rag_app, settings, fake_llm, lightrag):
    edit_runtime_config(settings.runtime_config_path, memory={"enabled": True})
    channel = RecordingChannel()
    told = [
        "My sister Olga moved to Porto last spring for her new job.",
        "The staging cluster is called Tern and it runs Kubernetes 1.29.",
    ]
    for text in told:
        await rag_app.handle(say("901", text), channel)
    await wait_indexed(rag_app, lightrag, len(told))
    await rag_app.memory.drain()
    await rag_app.handle(say("901", "/new"), channel)
    await rag_app.handle(say("901", "Which city did my sister Olga move to?"), channel)

    prompt = fake_llm.system_prompts()[-1]
    memory = prompt.split("\n# Memory\n", 1)[1].split("\n\n# ", 1)[0]
    assert "Porto" in memory
    assert prompt.count("Olga moved to Porto") == 1, (
        f"the same words twice in one prompt:\n# Memory\n{memory}\n"
        f"# Relevant Memory\n{relevant_memory(prompt) if '# Relevant Memory' in prompt else ''}"
    )
