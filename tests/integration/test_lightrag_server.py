"""The LightRAG adapter and the bot against a real lightrag-server on 127.0.0.1.

The server's LLM and embeddings are a deterministic local fake that answers LightRAG's own
extraction and keyword prompts, so a real knowledge graph is built from what is indexed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from bot.adapters.lightrag import LightRagAdapter
from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.rag.documents import exchange_document, owner_tag_of
from bot.rag.ledger import IndexLedger
from bot.rag.long_term import LongTermDocuments
from bot.rag.model import RagUnavailable
from bot.rag.queue import IndexQueue
from tests.fakes.lightrag_server import LightRagServer

AT = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
MODES = ["local", "global", "hybrid", "naive", "mix"]


@pytest.fixture(scope="module")
def server(rag_llm, tmp_path_factory):
    lightrag = LightRagServer(tmp_path_factory.mktemp("lightrag"), rag_llm.base_url).start()
    yield lightrag
    lightrag.stop()


def config_for(tmp_path, url, **rag):
    path = tmp_path / f"config-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps({"rag": {"enabled": True, "url": url, **rag}}))
    return path


def turn(server, mode, **rag) -> RuntimeConfig:
    """The config snapshot of a turn asking `server` in `mode`."""
    return RuntimeConfig.model_validate(
        {"rag": {"enabled": True, "url": server.url, "queryMode": mode, **rag}}
    )


def adapter_for(tmp_path, server, key="test-rag-key", **rag):
    store = RuntimeConfigStore(config_for(tmp_path, server.url, **rag))
    return LightRagAdapter(store, SecretStr(key))


def new_user() -> str:
    return str(uuid.uuid4().int % 10**9)


async def index(adapter, owner, user_text, answer):
    document = exchange_document(owner, f"test:{owner}", user_text, answer, AT)
    receipt = await adapter.index(document)
    for _ in range(100):
        status = await adapter.upload_status(receipt.track_id)
        if status is not None:
            break
        await asyncio.sleep(0.05)
    assert status is not None and status.doc_id.startswith("doc-")
    return document


async def test_indexed_conversation_is_retrieved_in_every_mode_and_style(tmp_path, server):
    owner = new_user()
    adapter = adapter_for(tmp_path, server)
    await index(
        adapter,
        owner,
        "Our Grafana dashboard lives on port 3917 behind Caddy.",
        "Noted: Grafana listens on 3917 and Caddy proxies it.",
    )
    server.wait_until_processed()
    for mode in MODES:
        context = await adapter.query(
            "Which port does our Grafana dashboard use?", owner, turn(server, mode)
        )
        assert "3917" in context, (mode, context)
        assert context.startswith(("Past conversations:", "Related facts:", "Known entities:"))

    for mode in MODES:
        answering = turn(server, mode, retrievalStyle="answer")
        answer = await adapter.query("Which port does our Grafana dashboard use?", owner, answering)
        assert "3917" in answer, (mode, answer)
    await adapter.aclose()


async def test_two_users_memories_never_cross(tmp_path, server):
    alice, bob = new_user(), new_user()
    adapter = adapter_for(tmp_path, server)
    await index(adapter, alice, "My secret vault code is 4471 for the Zurich office.", "Stored.")
    await index(adapter, bob, "The Zurich office vault code question: I keep mine as 9902.", "Ok.")
    server.wait_until_processed(at_least=2)
    for mode in MODES:
        for owner, mine, theirs in ((alice, "4471", "9902"), (bob, "9902", "4471")):
            context = await adapter.query(
                "What is the Zurich office vault code?", owner, turn(server, mode)
            )
            assert mine in context, (mode, owner, context)
            assert theirs not in context, (mode, owner, context)
    stranger = await adapter.query(
        "What is the Zurich office vault code?", new_user(), turn(server, "mix")
    )
    assert stranger == ""
    await adapter.aclose()


async def test_wrong_api_key_is_a_clear_configuration_error(tmp_path, server, caplog):
    adapter = adapter_for(tmp_path, server, key="not-the-key")
    with caplog.at_level(logging.ERROR, logger="bot.rag"):
        assert (
            await adapter.query("Which port does Grafana use?", new_user(), turn(server, "hybrid"))
            == ""
        )
    assert "Configuration error" in caplog.text and "RAG_API_KEY" in caplog.text
    assert "not-the-key" not in caplog.text
    with pytest.raises(RagUnavailable):
        await adapter.index(exchange_document("1", "t:1", "question text", "answer", AT))
    health = await adapter.health()
    assert not health.healthy
    await adapter.aclose()


async def test_forgetting_a_user_deletes_their_documents_from_the_server(tmp_path, server):
    owner, other = new_user(), new_user()
    adapter = adapter_for(tmp_path, server)
    queue, ledger = IndexQueue(tmp_path / "queue"), IndexLedger(tmp_path / "ledger")
    from bot.rag.indexer import RagIndexer

    worker = RagIndexer(
        queue, adapter, ledger, RuntimeConfigStore(config_for(tmp_path, server.url))
    )
    worker.start()
    for text in (
        "I moved the backups to the Oslo bucket nightly.",
        "Backups rotate every 14 days.",
    ):
        await worker.enqueue(exchange_document(owner, f"t:{owner}", text, "Noted.", AT))
    await worker.enqueue(
        exchange_document(other, f"t:{other}", "Oslo is where my bucket is.", "Ok.", AT)
    )
    await worker.stop(30)
    server.wait_until_processed(at_least=3)
    store = LongTermDocuments(queue, ledger, adapter)
    assert await store.count_for(owner) == 2

    assert await store.forget_user(owner) == 2
    tags = [owner_tag_of(s) for s in _wait_gone(server, owner)]
    assert owner not in tags and other in tags
    assert await adapter.query("Where are the backups?", owner, turn(server, "naive")) == ""
    assert "Oslo" in await adapter.query("Where is the bucket?", other, turn(server, "naive"))
    await adapter.aclose()


def _wait_gone(server, owner, timeout=30):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sources = server.file_sources()
        if owner not in [owner_tag_of(s) for s in sources]:
            return sources
        time.sleep(0.3)
    raise AssertionError(f"documents of {owner} still on the server")


async def test_two_users_saying_the_very_same_thing_both_remember_it(tmp_path, server):
    from bot.rag.indexer import RagIndexer

    alice, bob = new_user(), new_user()
    adapter = adapter_for(tmp_path, server)
    config = RuntimeConfigStore(config_for(tmp_path, server.url))
    worker = RagIndexer(IndexQueue(tmp_path / "q"), adapter, IndexLedger(tmp_path / "l"), config)
    worker.start()
    for owner in (alice, bob):  # LightRAG ids documents by their text: the same text twice
        await worker.enqueue(
            exchange_document(owner, "t", "Our VPN exit node is Frankfurt-7.", "Ok.", AT)
        )
    await worker.stop(30)
    server.wait_until_processed(at_least=1)
    for owner in (alice, bob):
        assert "Frankfurt-7" in await adapter.query(
            "Which VPN exit node?", owner, turn(server, "naive")
        )
    await adapter.aclose()
