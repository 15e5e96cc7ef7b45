"""Operators' metrics: what the pipeline and the LLM meter report, and what `/metrics` shows."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.config import RuntimeConfig
from bot.config.model import UsageConfig
from bot.conversation import ChatAddress, ChatMessage, IncomingMessage, Session
from bot.ops.metrics import MAX_LABEL_VALUES, OTHER, PrometheusMetrics
from bot.pipeline import Pipeline, TurnContext
from bot.ports.llm import LlmRequest, LlmResponse, TokenUsage
from bot.ports.metrics import LlmOutcome, TurnOutcome
from bot.retry import RetryPolicy, retries_so_far
from bot.usage.ledger import UsageLedger
from bot.usage.metered import BudgetReached, MeteredLlm
from tests.fakes.llm import ScriptedLlm, llm_down
from tests.metrics_text import sample


class Step:
    def __init__(self, name: str, order: int, fail: bool = False, skip: bool = False) -> None:
        self.name, self.order, self._fail, self._skip = name, order, fail, skip

    def should_process(self, ctx: TurnContext) -> bool:
        return not self._skip

    async def process(self, ctx: TurnContext) -> None:
        if self._fail:
            raise RuntimeError("broke")


def make_ctx() -> TurnContext:
    message = IncomingMessage(ChatAddress("test", "1"), "1", "hello")
    return TurnContext(message, Session(key="test:1"), RuntimeConfig(), None)


def rendered(metrics: PrometheusMetrics) -> str:
    return metrics.render()[0].decode()


async def test_pipeline_reports_each_system_that_ran_and_the_turns_outcome():
    metrics = PrometheusMetrics()
    pipeline = Pipeline(
        [Step("First", 10), Step("Skipped", 20, skip=True), Step("Broken", 30, fail=True)],
        metrics,
    )
    await pipeline.run(make_ctx())
    text = rendered(metrics)
    assert sample(text, "bot_system_seconds_count", system="First") == 1
    assert sample(text, "bot_system_seconds_count", system="Broken") == 1
    assert "Skipped" not in text, "a system that did not run has no time"
    assert sample(text, "bot_system_failures_total", system="Broken") == 1
    assert sample(text, "bot_turns_total", outcome=TurnOutcome.FAILED.value) == 1
    assert sample(text, "bot_turn_seconds_count") == 1


async def test_a_cancelled_turn_counts_as_cancelled():
    metrics = PrometheusMetrics()
    started = asyncio.Event()

    class Slow(Step):
        async def process(self, ctx: TurnContext) -> None:
            started.set()
            await asyncio.Event().wait()

    turn = asyncio.create_task(Pipeline([Slow("Slow", 10)], metrics).run(make_ctx()))
    await started.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert sample(rendered(metrics), "bot_turns_total", outcome="cancelled") == 1


def request(model: str = "m1", who: str | None = "42") -> LlmRequest:
    return LlmRequest([ChatMessage(role="user", content="hi")], model, 0.0, 10, 5.0, billed_to=who)


async def test_llm_calls_and_tokens_are_counted_by_model_without_the_user(tmp_path):
    metrics = PrometheusMetrics()
    llm = ScriptedLlm(
        LlmResponse("answer", usage=TokenUsage(120, 30)), llm_down(), LlmResponse("again")
    )
    metered = MeteredLlm(llm, UsageLedger(tmp_path), lambda: UsageConfig(), metrics)
    await metered.complete(request(who="777000111"))
    with pytest.raises(Exception, match="failing"):
        await metered.complete(request(who="777000111"))
    text = rendered(metrics)
    assert sample(text, "bot_llm_tokens_total", model="m1", kind="prompt") == 120
    assert sample(text, "bot_llm_tokens_total", model="m1", kind="completion") == 30
    assert sample(text, "bot_llm_calls_total", model="m1", outcome="ok") == 1
    assert sample(text, "bot_llm_calls_total", model="m1", outcome="error") == 1
    assert "777000111" not in text


async def test_a_call_refused_at_the_budget_is_counted_as_refused(tmp_path):
    metrics = PrometheusMetrics()
    config = UsageConfig(daily_token_budget=10)
    metered = MeteredLlm(
        ScriptedLlm(LlmResponse("a", usage=TokenUsage(20, 0))),
        UsageLedger(tmp_path),
        lambda: config,
        metrics,
    )
    await metered.complete(request())
    with pytest.raises(BudgetReached):
        await metered.complete(request())
    assert sample(rendered(metrics), "bot_llm_calls_total", outcome=LlmOutcome.REFUSED) == 1


def test_model_labels_are_capped_so_the_output_cannot_grow_without_bound():
    metrics = PrometheusMetrics()
    for n in range(MAX_LABEL_VALUES + 10):
        metrics.llm_called(f"model-{n}", LlmOutcome.OK, 1, 1)
    text = rendered(metrics)
    assert sample(text, "bot_llm_calls_total", model=OTHER) == 10
    assert f"model-{MAX_LABEL_VALUES}" not in text


def test_errors_are_counted_by_their_log_prefix_not_their_words():
    metrics = PrometheusMetrics()
    handler = metrics.error_counter()
    log = logging.getLogger("bot.test_ops_metrics")
    log.addHandler(handler)
    try:
        log.error("[RAG] query failed: %s", "a user's secret words")
        log.warning("[Disk] could not write the %s", "sessions")
        log.warning("no prefix here")
        log.info("[RAG] informational lines are not errors")
    finally:
        log.removeHandler(handler)
    text = rendered(metrics)
    assert sample(text, "bot_errors_total", kind="rag", level="error") == 1
    assert sample(text, "bot_errors_total", kind="disk", level="warning") == 1
    assert sample(text, "bot_errors_total", kind=OTHER, level="warning") == 1
    assert sample(text, "bot_errors_total", kind="rag", level="info") == 0
    assert "secret words" not in text


async def test_retries_are_counted_per_service():
    async def no_wait(seconds: float) -> None:
        pass

    policy = RetryPolicy(
        "[OpsTest] delete", lambda error: True, attempts=3, sleep=no_wait, log_retries=False
    )
    before = retries_so_far().get("OpsTest", 0)
    attempts = 0

    async def flaky() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise ConnectionError("down")
        return "done"

    assert await policy.call(flaky) == "done"
    assert retries_so_far()["OpsTest"] == before + 2
    assert sample(rendered(PrometheusMetrics()), "bot_retries_total", service="OpsTest") >= 2


def test_watched_values_are_read_when_scraped():
    metrics = PrometheusMetrics()
    depth = [3]
    state = ["closed"]
    metrics.watch("bot_index_queue_depth", "queued", lambda: depth[0])
    metrics.watch_state("bot_rag_circuit", "circuit", ["closed", "open"], lambda: state[0])
    assert sample(rendered(metrics), "bot_index_queue_depth") == 3
    depth[0], state[0] = 7, "open"
    text = rendered(metrics)
    assert sample(text, "bot_index_queue_depth") == 7
    assert sample(text, "bot_rag_circuit", state="open") == 1
    assert sample(text, "bot_rag_circuit", state="closed") == 0


async def test_a_call_stopped_mid_stream_counts_as_cancelled_with_its_estimated_tokens(tmp_path):
    metrics = PrometheusMetrics()
    streaming = asyncio.Event()

    class StreamsThenHangs:
        async def complete(self, request, on_text=None):
            await on_text("partial answer " * 10)
            streaming.set()
            await asyncio.Event().wait()

    metered = MeteredLlm(StreamsThenHangs(), UsageLedger(tmp_path), lambda: UsageConfig(), metrics)

    async def shown(text: str) -> None:
        pass

    call = asyncio.create_task(metered.complete(request(), shown))
    await streaming.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    text = rendered(metrics)
    assert sample(text, "bot_llm_calls_total", model="m1", outcome="cancelled") == 1
    assert sample(text, "bot_llm_tokens_total", model="m1", kind="completion") > 0
