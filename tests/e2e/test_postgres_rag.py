"""Long-term memory with `DATABASE_URL`: the index queue and ledger in PostgreSQL, a real
LightRAG server. An exchange is indexed from the database's queue (nothing in files), the
ledger row names its document, and `/forget all` deletes it there and on the server."""

from __future__ import annotations

import asyncio

import pytest

from bot.adapters.postgres.rag_queue import PostgresIndexLedger
from bot.app import BotApp
from tests.conftest import edit_runtime_config
from tests.e2e.test_rag_recall import RAG_KEY, lightrag, relevant_memory, say, wait_indexed
from tests.fakes.channel import RecordingChannel

pytestmark = pytest.mark.postgres
__all__ = ["lightrag"]  # the LightRAG server fixture, shared with test_rag_recall


@pytest.fixture
async def rag_app(settings, fake_llm, lightrag, database_url):
    settings.openai_base_url = fake_llm.base_url
    settings.rag_api_key = RAG_KEY
    settings.database_url = database_url
    # `# Memory` off: `# Relevant Memory` leaves out what it holds (`bot/rag/relevance.py`),
    # and these tests look for LightRAG's recall.
    edit_runtime_config(
        settings.runtime_config_path,
        memory={"enabled": False},
        rag={"enabled": True, "url": lightrag.url, "indexRetryMaxSeconds": 1, "timeoutSeconds": 5},
    )
    built = BotApp.build(settings)
    await built.start()
    yield built
    await built.aclose()


async def test_an_exchange_goes_through_the_database_queue_and_forget_all_deletes_it(
    rag_app, settings, fake_llm, lightrag
):
    channel = RecordingChannel()
    await rag_app.handle(
        say("801", "My Grafana dashboard lives on port 3917 behind Caddy."), channel
    )
    await wait_indexed(rag_app, lightrag, 1)
    assert not list((settings.data_dir / "rag").glob("**/*.json*")), "nothing in files"
    ledger = rag_app.stores.index_ledger
    assert isinstance(ledger, PostgresIndexLedger)
    for _ in range(200):  # the document's id is recorded once the server has processed it
        if [e.doc_id for e in await ledger.entries_of("801") if e.doc_id]:
            break
        await asyncio.sleep(0.05)
    assert [e.doc_id for e in await ledger.entries_of("801") if e.doc_id]

    await rag_app.handle(say("801", "/new"), channel)
    await rag_app.handle(say("801", "Which port does my Grafana dashboard use?"), channel)
    assert "3917" in relevant_memory(fake_llm.system_prompts()[-1])

    await rag_app.handle(say("801", "/forget all"), channel)
    await rag_app.handle(say("801", "/forget confirm"), channel)
    assert await ledger.entries_of("801") == []
    assert await rag_app.indexer.queue.count_of("801") == 0
    reply = channel.texts()[-1]
    assert reply.startswith("Done: deleted") and "long-term documents (LightRAG)" in reply
