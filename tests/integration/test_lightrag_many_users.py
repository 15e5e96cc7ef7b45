"""Long-term memory for many users on one real lightrag-server, with semantic embeddings.

The server's LLM is the deterministic fake and its embeddings are the bot's bundled e5
model, so a question asked in other words than the fact can find it by meaning. Forty users
each tell the bot their pet's name (`bench.rag_many_users` has their words); the bot's
indexer sends the owner-tagged exchanges, and the adapter is built as the bot builds it.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from bench.rag_many_users import ManyUsersBench, ask, mentions, people
from bot.rag.documents import exchange_document
from bot.words import content_words
from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.openai_server import FakeOpenAiServer, semantic_embedder

USERS = 40
CROWD = people(USERS, told=1)  # one fact each keeps indexing to ~15 s


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A server holding the pet of each of the forty users, indexed as the bot does."""
    with FakeOpenAiServer(responder=lightrag_responder, embedder=semantic_embedder()) as llm:
        bench = ManyUsersBench(tmp_path_factory.mktemp("many-users"), llm.base_url)
        bench.server.start()
        try:

            async def index_everyone() -> None:
                try:
                    await bench.index(CROWD)
                finally:
                    await bench.aclose()

            asyncio.run(index_everyone())
            yield bench
        finally:
            bench.server.stop()


async def test_a_question_in_other_words_finds_the_users_fact_among_many_users(crowded):
    owner, said = "880001", "We adopted a beagle puppy last spring and called her Pimento."
    question = "What is my dog named?"
    assert not {w.lower() for w in content_words(question)} & {
        w.lower() for w in content_words(said)
    }, "no word in common: only the meaning can match"
    adapter = crowded.adapter()
    at = datetime(2026, 5, 1, tzinfo=UTC)
    await adapter.index(exchange_document(owner, "t", said, "Lovely, congratulations!", at))
    await asyncio.to_thread(crowded.server.wait_until_processed, USERS + 1)

    context = await adapter.query(question, owner, crowded.config.current())
    assert "Pimento" in context, context
    assert not [pet for pet in (p.pet for p in CROWD) if mentions(context, pet)]
    await adapter.aclose()


async def test_with_forty_users_each_users_recall_holds_and_nothing_of_others_appears(crowded):
    adapter = crowded.adapter()
    assert crowded.ledger.owner_count() == USERS
    score = await ask(adapter, crowded.config.current(), CROWD, CROWD)
    assert score.leaks == 0, score.leaked
    assert score.recall == 1.0, score.misses
    await adapter.aclose()
