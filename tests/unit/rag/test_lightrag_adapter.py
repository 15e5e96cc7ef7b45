"""The LightRAG adapter against a mocked transport: request shapes and every error path."""

import json
import logging
from datetime import UTC, datetime

import httpx
import pytest
import respx
from pydantic import SecretStr

from bot.adapters.lightrag import LIGHTRAG_CANDIDATES, LightRagAdapter, candidate_limits
from bot.config import RuntimeConfigStore
from bot.rag.circuit import CircuitState
from bot.rag.documents import exchange_document, file_source_for
from bot.rag.model import RagRejected, RagUnavailable
from tests.conftest import turn_config

URL = "http://rag.test:9621"
AT = datetime(2026, 1, 1, tzinfo=UTC)
MINE = file_source_for(AT, "111", "t:1")
OTHERS = file_source_for(AT, "222", "t:2")


def write_config(path, **rag):
    values = {"enabled": True, "url": URL, "queryMode": "hybrid", **rag}
    path.write_text(json.dumps({"rag": values}))


@pytest.fixture
def config_path(tmp_path):
    path = tmp_path / "runtime-config.json"
    write_config(path)
    return path


async def ask(adapter, config_path, text, mode=None, owner="111"):
    """A turn's query: the config file as it is now is the turn's snapshot."""
    return await adapter.query(text, owner, turn_config(config_path, mode))


@pytest.fixture
def adapter(config_path):
    return LightRagAdapter(RuntimeConfigStore(config_path), SecretStr("env-key-123"))


def data_answer(*chunks):
    return {
        "status": "success",
        "data": {
            "entities": [],
            "relationships": [],
            "chunks": [{"content": text, "file_path": source} for text, source in chunks],
        },
        "metadata": {},
    }


@respx.mock
async def test_context_query_sends_the_right_request_and_keeps_only_the_users_chunks(
    config_path, adapter
):
    route = respx.post(f"{URL}/query/data").respond(
        json=data_answer(("Redis runs on 6380", MINE), ("Bob likes Roquefort", OTHERS))
    )
    context = await ask(adapter, config_path, "  Which port does Redis use?  ", "local")
    assert context == "Past conversations:\n- Redis runs on 6380"
    request = route.calls.last.request
    assert json.loads(request.content) == {
        "query": "Which port does Redis use?",
        "mode": "local",
        "hl_keywords": ["Which port does Redis use?"],
        "ll_keywords": ["port", "Redis", "use"],
    }, "keywords given, so LightRAG need not ask its LLM for them"
    assert request.headers["X-API-Key"] == "env-key-123"
    assert "authorization" not in request.headers


def test_more_users_on_the_server_ask_for_more_candidates_within_a_bound():
    assert candidate_limits(0) == {} and candidate_limits(1) == {}, "the server's own settings"
    two, fifty, crowd = candidate_limits(2), candidate_limits(50), candidate_limits(10_000)
    assert two["top_k"] == 44 and two["chunk_top_k"] == 22
    assert fifty == {
        "top_k": 236,
        "chunk_top_k": 118,
        "max_entity_tokens": 35400,
        "max_relation_tokens": 47200,
        "max_total_tokens": 177000,
    }
    assert crowd == {name: value * 8 for name, value in LIGHTRAG_CANDIDATES.items()}


@respx.mock
async def test_a_context_query_asks_for_candidates_by_the_number_of_users(config_path):
    owners = 1
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), None, owners=lambda: owners)
    route = respx.post(f"{URL}/query/data").respond(json=data_answer())
    await ask(adapter, config_path, "Which port does Redis use?")
    assert "top_k" not in json.loads(route.calls.last.request.content)
    owners = 50
    await ask(adapter, config_path, "Which port does Redis use?")
    sent = json.loads(route.calls.last.request.content)
    assert (sent["top_k"], sent["chunk_top_k"]) == (236, 118)

    owners = 1
    write_config(config_path, retrievalStyle="answer")
    answer = respx.post(f"{URL}/query").respond(json={"response": "6380", "llm_generated": True})
    await ask(adapter, config_path, "Which port does Redis use?")
    assert "top_k" not in json.loads(answer.calls.last.request.content), "its LLM reads them all"


@respx.mock
async def test_answer_style_falls_back_to_context_while_several_users_share_it(config_path, caplog):
    owners = 1
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), None, owners=lambda: owners)
    config_path.write_text(
        json.dumps(
            {
                "rag": {"enabled": True, "url": URL, "retrievalStyle": "answer"},
                "telegram": {"allowedUsers": [1, 2]},
            }
        )
    )
    answer = respx.post(f"{URL}/query").respond(json={"response": "Bob's cheese"})
    data = respx.post(f"{URL}/query/data").respond(
        json=data_answer(("Redis runs on 6380", MINE), ("Bob likes Roquefort", OTHERS))
    )
    with caplog.at_level(logging.WARNING, logger="bot.rag"):
        for _ in range(3):
            context = await ask(adapter, config_path, "What does everyone like?", "mix")
    assert "Roquefort" not in context and not answer.called and data.call_count == 3
    refusals = [r.message for r in caplog.records if "'answer' is refused" in r.message]
    assert len(refusals) == 1, "one clear line, not one per query"
    assert "2 users are allowed" in refusals[0]

    write_config(config_path, retrievalStyle="answer")  # one user allowed...
    owners = 2  # ...but the server holds someone else's documents
    await ask(adapter, config_path, "What does everyone like?", "mix")
    assert not answer.called
    owners = 1
    await ask(adapter, config_path, "What does everyone like?", "mix")
    assert answer.called, "alone, the configured style applies"


@respx.mock
async def test_a_groups_query_is_in_context_style_whatever_the_config(config_path):
    """One user, one owner on the server: `answer` style applies in private, but LightRAG's
    answer would draw on that user's private documents in their group too."""
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), None, owners=lambda: 1)
    write_config(config_path, retrievalStyle="answer")
    answer = respx.post(f"{URL}/query").respond(
        json={"response": "PIN 4321", "llm_generated": True}
    )
    group = file_source_for(AT, "group:telegram:-100", "telegram:-100")
    data = respx.post(f"{URL}/query/data").respond(
        json=data_answer(("bank PIN is 4321", MINE), ("offsite at Linden Lodge", group))
    )
    context = await ask(adapter, config_path, "What is my bank PIN?", owner="group:telegram:-100")
    assert not answer.called and data.called
    assert "4321" not in context and "Linden Lodge" in context


@respx.mock
async def test_answer_style_uses_query_and_treats_no_context_as_no_memory(config_path, adapter):
    write_config(config_path, retrievalStyle="answer")
    route = respx.post(f"{URL}/query")
    route.respond(json={"response": "Redis is on 6380.", "llm_generated": True})
    assert await ask(adapter, config_path, "Which port?", "mix") == "Redis is on 6380."
    route.respond(json={"response": "Sorry.[no-context]", "llm_generated": True})
    assert await ask(adapter, config_path, "Which port?", "mix") == ""
    route.respond(json={"response": "raw chunks", "llm_generated": False})
    assert await ask(adapter, config_path, "Which port?", "mix") == ""


@respx.mock
async def test_config_key_is_used_when_no_environment_key(config_path):
    write_config(config_path, apiKey="file-key-456")
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), None)
    route = respx.post(f"{URL}/query/data").respond(json=data_answer())
    await ask(adapter, config_path, "anything here")
    assert route.calls.last.request.headers["X-API-Key"] == "file-key-456"


@respx.mock
async def test_too_short_queries_and_disabled_rag_make_no_request(config_path, adapter):
    route = respx.post(f"{URL}/query/data").respond(json=data_answer())
    assert await ask(adapter, config_path, "hi") == ""
    assert await ask(adapter, config_path, "  ") == ""
    write_config(config_path, enabled=False)
    assert await ask(adapter, config_path, "a long enough question") == ""
    assert route.call_count == 0


@respx.mock
async def test_a_config_edit_applies_on_the_next_call(config_path, adapter):
    respx.post(f"{URL}/query/data").respond(json=data_answer(("old server", MINE)))
    respx.post("http://other.test:1/query/data").respond(json=data_answer(("new server", MINE)))
    assert "old server" in await ask(adapter, config_path, "which server?")
    write_config(config_path, url="http://other.test:1")
    assert "new server" in await ask(adapter, config_path, "which server?")


@respx.mock
async def test_a_query_follows_the_turns_snapshot_not_a_newer_file(config_path, adapter):
    """The turn took its config before the edit: its mode and its server, both of them."""
    old = respx.post(f"{URL}/query/data").respond(json=data_answer(("old server", MINE)))
    new = respx.post("http://other.test:1/query/data").respond(json=data_answer())
    snapshot = turn_config(config_path, "local")
    write_config(config_path, url="http://other.test:1", queryMode="naive", timeoutSeconds=1)
    assert "old server" in await adapter.query("which server?", "111", snapshot)
    assert not new.called and json.loads(old.calls.last.request.content)["mode"] == "local"


@pytest.mark.parametrize(
    ("mock", "log_line"),
    [
        (dict(side_effect=httpx.ConnectError("refused")), "[RAG] Query error: Connection refused"),
        (dict(side_effect=httpx.ReadTimeout("slow")), "[RAG] Query error: timed out after 10s"),
        (dict(status_code=503), "[RAG] Query failed: HTTP 503"),
        (dict(status_code=500), "[RAG] Query failed: HTTP 500"),
        (dict(status_code=422, json={"detail": "too short"}), "[RAG] Query failed: HTTP 422"),
        (dict(status_code=200, content=b"<html>"), "[RAG] Query error: invalid JSON"),
        (dict(status_code=200, json={"data": {"chunks": 5}}), "[RAG] Query error: unexpected"),
    ],
)
@respx.mock
async def test_every_failure_yields_no_context_and_one_warning(
    config_path, adapter, caplog, mock, log_line
):
    route = respx.post(f"{URL}/query/data")
    if "side_effect" in mock:
        route.mock(**mock)
    else:
        route.respond(**mock)
    with caplog.at_level(logging.WARNING, logger="bot.rag"):
        assert await ask(adapter, config_path, "Which port does Redis use?") == ""
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.rag"]
    assert [line for line in lines if line.startswith(log_line)], lines
    assert len([line for line in lines if "[RAG] Query" in line]) == 1


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
async def test_rejected_key_is_logged_as_a_configuration_error(
    config_path, adapter, caplog, status
):
    respx.post(f"{URL}/query/data").respond(status_code=status, json={"detail": "Invalid API Key"})
    with caplog.at_level(logging.ERROR, logger="bot.rag"):
        assert await ask(adapter, config_path, "Which port does Redis use?") == ""
    message = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    assert "Configuration error" in message and "RAG_API_KEY" in message
    assert "env-key-123" not in caplog.text


@respx.mock
async def test_circuit_opens_fails_fast_and_probes_after_the_cooldown(config_path, adapter):
    write_config(config_path, circuitFailureThreshold=2, circuitCooldownSeconds=30)
    route = respx.post(f"{URL}/query/data").respond(status_code=503)
    for _ in range(2):
        await ask(adapter, config_path, "Which port does Redis use?")
    assert adapter.breaker.state is CircuitState.OPEN
    assert not adapter.is_available()
    await ask(adapter, config_path, "Which port does Redis use?")
    assert route.call_count == 2, "an open circuit makes no request"

    adapter.breaker._opened_at -= 31  # the cooldown passes
    assert adapter.is_available()
    route.respond(json=data_answer(("back again", MINE)))
    assert "back again" in await ask(adapter, config_path, "Which port does Redis use?")
    assert adapter.breaker.state is CircuitState.CLOSED and route.call_count == 3


@respx.mock
async def test_a_hanging_server_opens_the_circuit_after_one_timeout(config_path, adapter):
    route = respx.post(f"{URL}/query/data").mock(side_effect=httpx.ReadTimeout("slow"))
    await ask(adapter, config_path, "Which port does Redis use?")
    await ask(adapter, config_path, "Which port does Redis use?")
    assert route.call_count == 1
    health = await adapter.health()
    assert not health.healthy and "circuit open" in health.detail


def doc():
    return exchange_document("111", "t:1", "Where is Redis?", "On port 6380.", AT)


@respx.mock
async def test_index_posts_text_and_file_source_and_reads_back_the_document_id(adapter):
    post = respx.post(f"{URL}/documents/text").respond(
        json={"status": "success", "message": "ok", "track_id": "insert_1"}
    )
    track = respx.get(f"{URL}/documents/track_status/insert_1")
    document = doc()
    receipt = await adapter.index(document)
    assert json.loads(post.calls.last.request.content) == {
        "text": document.text,
        "file_source": document.file_source,
    }
    assert (receipt.track_id, receipt.already_present) == ("insert_1", False)

    track.respond(json={"track_id": "insert_1", "documents": []})
    assert await adapter.upload_status("insert_1") is None, "not registered yet"
    track.respond(json={"documents": [{"id": "doc-abc", "status": "pending"}]})
    status = await adapter.upload_status("insert_1")
    assert (status.doc_id, status.duplicate_of) == ("doc-abc", None)
    duplicate = {"is_duplicate": True, "original_doc_id": "doc-first"}
    track.respond(json={"documents": [{"id": "dup-1", "status": "failed", "metadata": duplicate}]})
    status = await adapter.upload_status("insert_1")
    assert (status.doc_id, status.duplicate_of) == ("dup-1", "doc-first")


@respx.mock
async def test_index_outcomes_are_typed_for_the_worker(adapter):
    route = respx.post(f"{URL}/documents/text")
    route.respond(status_code=409, json={"detail": "already contains"})
    assert (await adapter.index(doc())).already_present
    route.respond(status_code=413, json={"detail": "too large"})
    with pytest.raises(RagRejected):
        await adapter.index(doc())
    route.respond(status_code=500)
    with pytest.raises(RagUnavailable):
        await adapter.index(doc())


@respx.mock
async def test_delete_sends_ids_with_their_extraction_cache_and_busy_is_retryable(adapter):
    route = respx.delete(f"{URL}/documents/delete_document")
    route.respond(json={"status": "deletion_started", "message": "", "doc_id": "a, b"})
    await adapter.delete(["a", "b"])
    sent = json.loads(route.calls.last.request.content)
    assert sent == {"doc_ids": ["a", "b"], "delete_llm_cache": True}
    route.respond(json={"status": "busy", "message": "pipeline busy", "doc_id": "a"})
    with pytest.raises(RagUnavailable):
        await adapter.delete(["a"])


@respx.mock
async def test_documents_of_pages_through_the_server_and_keeps_the_owners(adapter):
    def page(request):
        number = json.loads(request.content)["page"]
        docs = [
            {"id": f"doc-{number}-mine", "file_path": file_source_for(AT, "111", "t:1")},
            {"id": f"doc-{number}-theirs", "file_path": file_source_for(AT, "222", "t:2")},
            {"id": f"doc-{number}-foreign", "file_path": "manual_upload.pdf"},
        ]
        return httpx.Response(200, json={"documents": docs, "pagination": {"total_pages": 2}})

    respx.post(f"{URL}/documents/paginated").mock(side_effect=page)
    found = await adapter.documents_of("111")
    assert [d.doc_id for d in found] == ["doc-1-mine", "doc-2-mine"]


@respx.mock
async def test_when_one_query_times_out_the_others_in_flight_give_up_at_once(config_path):
    import asyncio
    import time

    write_config(config_path, timeoutSeconds=0.3, circuitCooldownSeconds=30)
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), SecretStr("k"))

    calls = []

    async def stalled_server(request):
        calls.append(request)
        if len(calls) == 1:  # a mocked transport enforces no time-out: the first one raises it
            await asyncio.sleep(0.3)
            raise httpx.ReadTimeout("no answer")
        await asyncio.sleep(10)  # a server that stopped answering
        return httpx.Response(200, json=data_answer(("too late", MINE)))

    respx.post(f"{URL}/query/data").mock(side_effect=stalled_server)
    started = time.monotonic()
    first = asyncio.create_task(ask(adapter, config_path, "Which port does Redis use?"))
    await asyncio.sleep(0.2)  # these start later: each would otherwise wait its own 0.3 s
    others = [
        asyncio.create_task(ask(adapter, config_path, "Which port does Redis use?"))
        for _ in range(5)
    ]
    results = await asyncio.gather(first, *others)
    assert results == [""] * 6
    assert time.monotonic() - started < 0.45, "one time-out for all, not one each"
    assert adapter.breaker.state is CircuitState.OPEN


@respx.mock
async def test_keyword_extraction_can_be_left_to_lightrag(config_path, adapter):
    write_config(config_path, queryKeywords="lightrag")
    route = respx.post(f"{URL}/query/data").respond(json=data_answer())
    await ask(adapter, config_path, "Which port does Redis use?")
    assert json.loads(route.calls.last.request.content) == {
        "query": "Which port does Redis use?",
        "mode": "hybrid",
    }


@respx.mock
async def test_a_key_pasted_with_a_line_break_is_sent_without_it(config_path):
    write_config(config_path, apiKey="file-key-456\n")
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), SecretStr(" \n"))
    route = respx.post(f"{URL}/query/data").respond(json=data_answer())
    await ask(adapter, config_path, "anything here")
    assert route.calls.last.request.headers["X-API-Key"] == "file-key-456"


@respx.mock
async def test_a_key_no_header_can_carry_is_named_in_status_and_logs_but_never_shown(
    config_path, caplog
):
    write_config(config_path, apiKey="ключ-секрет-789")
    adapter = LightRagAdapter(RuntimeConfigStore(config_path), None)
    route = respx.route().respond(json=data_answer())
    health = await adapter.health()
    assert not health.healthy and "has characters an HTTP header cannot carry" in health.detail
    with caplog.at_level(logging.DEBUG):
        assert await ask(adapter, config_path, "anything here") == ""
    assert "cannot carry" in caplog.text
    assert "секрет" not in caplog.text + health.detail
    assert not route.called
    assert adapter.breaker.state is CircuitState.CLOSED, "a bad key is no failure of the server"


@respx.mock
async def test_texts_about_gives_the_owners_chunks_and_raises_when_the_server_fails(adapter):
    respx.post(f"{URL}/query/data").mock(
        side_effect=[
            httpx.Response(
                200,
                json=data_answer(("Redis runs on 6380", MINE), ("Bob likes Roquefort", OTHERS)),
            ),
            httpx.Response(503),
        ]
    )
    found = await adapter.texts_about("111", "Which port does Redis use?")
    assert [piece.text for piece in found] == ["Redis runs on 6380"]
    with pytest.raises(RagUnavailable):
        await adapter.texts_about("111", "Which port does Redis use?")
