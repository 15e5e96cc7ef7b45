"""The operators' listener of `python -m bot` (HTTP_PORT): probes and metrics, for real."""

from __future__ import annotations

import httpx

from tests.metrics_text import sample
from tests.system.harness import SECRETS, SystemStack, wait_for

ANN = 770_012_345  # long enough that finding it in the metrics cannot be a coincidence
SYSTEMS = ("ContextBuilding", "ToolLoop", "MemoryPersist", "RagIndexing", "ResponseRouting")


def get(stack: SystemStack, path: str) -> httpx.Response:
    assert stack.ops_url is not None
    return httpx.get(stack.ops_url + path, timeout=10)


def ready_state(stack: SystemStack) -> tuple[int, dict]:
    response = get(stack, "/readyz")
    return response.status_code, response.json()


def test_healthz_and_readyz_report_each_part(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True)

    health = get(stack, "/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "ok"

    wait_for(lambda: ready_state(stack)[0] == 200, 15, "the bot never became ready")
    body = ready_state(stack)[1]
    assert body["status"] == "ready"
    states = {name: part["state"] for name, part in body["checks"].items()}
    assert states == {"llm": "ok", "telegram": "ok", "lightrag": "ok", "store": "ok"}


def test_readyz_turns_503_while_the_llm_is_down_and_back_when_it_returns(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True)
    wait_for(lambda: ready_state(stack)[0] == 200, 15, "the bot never became ready")

    stack.llm_server.stop()
    wait_for(lambda: ready_state(stack)[0] == 503, 15, "/readyz stayed 200 with the LLM down")
    body = ready_state(stack)[1]
    assert body["status"] == "unready"
    assert body["checks"]["llm"]["state"] == "down"
    assert body["checks"]["telegram"]["state"] == "ok", "only the LLM is named as down"
    assert get(stack, "/healthz").status_code == 200, "alive, only not ready"

    stack.llm_server.restart()
    wait_for(lambda: ready_state(stack)[0] == 200, 15, "/readyz stayed 503 after the LLM came back")
    stack.converse(ANN, "Are you answering again after the outage?")


def test_lightrag_switched_off_is_ready_with_the_detail(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True, rag={"enabled": False})
    wait_for(lambda: ready_state(stack)[0] == 200, 15, "the bot never became ready")
    assert ready_state(stack)[1]["checks"]["lightrag"]["state"] == "off"


def test_metrics_count_a_turn_time_each_system_and_name_no_user(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True)
    words = "My locker code is Saffron-Quokka-42, please keep it."
    stack.converse(ANN, words)

    def turn_counted() -> bool:
        return sample(get(stack, "/metrics").text, "bot_turns_total", outcome="ok") >= 1

    wait_for(turn_counted, 10, "no turn was counted")
    response = get(stack, "/metrics")
    assert response.headers["Content-Type"].startswith("text/plain")
    metrics = response.text
    for system in SYSTEMS:
        assert sample(metrics, "bot_system_seconds_count", system=system) >= 1, system
    assert sample(metrics, "bot_turn_seconds_count") >= 1
    assert sample(metrics, "bot_llm_tokens_total", kind="prompt") > 0
    assert sample(metrics, "bot_llm_calls_total", outcome="ok") >= 1
    assert sample(metrics, "bot_rag_circuit", state="closed") == 1
    assert "bot_index_queue_depth" in metrics
    assert "bot_telegram_inbox_depth" in metrics
    assert str(ANN) not in metrics
    assert "Saffron" not in metrics and "Quokka" not in metrics
    assert not [secret for secret in SECRETS if secret in metrics]
