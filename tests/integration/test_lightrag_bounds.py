"""The LightRAG adapter against servers that misbehave: every call and answer is bounded."""

from __future__ import annotations

import asyncio
import json
import logging
import time

from pydantic import SecretStr

from bot.adapters.lightrag import MAX_ANSWER_BYTES, LightRagAdapter
from bot.config import RuntimeConfigStore
from bot.rag.circuit import CircuitState
from tests.conftest import turn_config
from tests.fakes.misbehaving_servers import OversizedServer, SilentServer, TricklingServer

QUESTION = "Which port does our Redis server use?"
CONFIG = "runtime-config.json"


def adapter_for(tmp_path, url: str, **rag) -> LightRagAdapter:
    path = tmp_path / CONFIG
    values = {"enabled": True, "url": url, "retrievalStyle": "answer", **rag}
    path.write_text(json.dumps({"rag": values}))
    return LightRagAdapter(RuntimeConfigStore(path), SecretStr("k"))


async def ask(adapter, tmp_path) -> str:
    """A turn's query: the config `adapter_for` wrote is the turn's snapshot."""
    return await adapter.query(QUESTION, "111", turn_config(tmp_path / CONFIG))


async def test_a_server_trickling_bytes_is_cut_off_at_the_deadline(tmp_path, caplog):
    with TricklingServer(interval=0.1) as server:
        adapter = adapter_for(tmp_path, server.url, timeoutSeconds=0.8, recallBudgetSeconds=5)
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="bot.rag"):
            assert await ask(adapter, tmp_path) == ""
        took = time.monotonic() - started
        await adapter.aclose()
    assert took < 1.5, f"a byte every 0.1 s held the call {took:.1f}s; the deadline is 0.8 s"
    assert "[RAG] Query error: timed out after 0.8s" in caplog.text
    assert adapter.breaker.state is CircuitState.OPEN


async def test_an_oversized_answer_is_dropped_past_the_cap(tmp_path, caplog):
    with OversizedServer(size=100 * 1024 * 1024) as server:
        adapter = adapter_for(tmp_path, server.url)
        with caplog.at_level(logging.WARNING, logger="bot.rag"):
            assert await ask(adapter, tmp_path) == ""
        await adapter.aclose()
        assert server.sent < 4 * MAX_ANSWER_BYTES, "reading stopped near the cap"
    assert "[RAG] Query error: answer over 4 MB" in caplog.text
    assert "stopped reading" in caplog.text


async def test_a_turn_waits_for_recall_at_most_the_budget_and_the_query_runs_on(tmp_path, caplog):
    with SilentServer() as server:
        adapter = adapter_for(tmp_path, server.url, timeoutSeconds=1.0, recallBudgetSeconds=0.3)
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="bot.rag"):
            assert await ask(adapter, tmp_path) == ""
            took = time.monotonic() - started
            assert took < 0.6, f"the turn waited {took:.2f}s for a 0.3 s budget"
            assert "no answer within 0.3s (rag.recallBudgetSeconds)" in caplog.text
            assert adapter.breaker.state is CircuitState.CLOSED, "the query is still running"
            for _ in range(100):  # until the query reaches its deadline
                if adapter.breaker.state is CircuitState.OPEN:
                    break
                await asyncio.sleep(0.05)
            assert adapter.breaker.state is CircuitState.OPEN
        assert "[RAG] Query error: timed out after 1s" in caplog.text
        await adapter.aclose()


async def test_an_answer_under_the_cap_and_within_the_budget_is_used(tmp_path):
    with OversizedServer(size=10) as server:  # one 64 KB chunk
        adapter = adapter_for(tmp_path, server.url)
        assert (await ask(adapter, tmp_path)).startswith("x")
        await adapter.aclose()


async def test_while_a_query_runs_past_its_budget_the_next_turns_do_not_wait_again(tmp_path):
    with SilentServer() as server:
        adapter = adapter_for(tmp_path, server.url, timeoutSeconds=5.0, recallBudgetSeconds=0.3)
        assert await ask(adapter, tmp_path) == ""  # waits its budget
        started = time.monotonic()
        for _ in range(5):
            assert await ask(adapter, tmp_path) == ""
        assert time.monotonic() - started < 0.3, "later turns waited the budget out again"
        assert server.held == 1, "one query reached the hanging server, not one per turn"
        await adapter.aclose()
