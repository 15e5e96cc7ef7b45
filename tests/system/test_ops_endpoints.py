"""The operators' listener of `python -m bot` (HTTP_PORT): probes and metrics, for real."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx

from tests.fakes.background_server import BackgroundServer
from tests.metrics_text import sample
from tests.system.harness import REPO, SECRETS, SystemStack, wait_for

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


def outage(stack: SystemStack, server: BackgroundServer, part: str, within: float) -> dict:
    """Stop `server` until /readyz is 503, then restart it until 200 and a turn goes through;
    returns what /readyz said of `part` during the outage."""
    wait_for(lambda: ready_state(stack)[0] == 200, 15, "the bot never became ready")
    server.stop()
    wait_for(lambda: ready_state(stack)[0] == 503, within, f"/readyz stayed 200, {part} down")
    body = ready_state(stack)[1]
    assert body["status"] == "unready"
    assert [n for n, c in body["checks"].items() if c["state"] == "down"] == [part]
    assert get(stack, "/healthz").status_code == 200, "alive, only not ready"
    server.restart()
    wait_for(lambda: ready_state(stack)[0] == 200, 60, f"/readyz stayed 503, {part} back")
    stack.converse(ANN, f"Are you answering again after the {part} outage?")
    return body["checks"][part]


def test_readyz_turns_503_while_the_llm_is_down_and_back_when_it_returns(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True)
    llm = outage(stack, stack.llm_server, "llm", within=15)
    assert llm["detail"] in ("the server cannot be reached", "no answer within 2.5s")


def test_readyz_turns_503_while_telegram_fails_and_back_when_it_answers(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True)
    telegram = outage(stack, stack.telegram, "telegram", within=30)
    assert "getUpdates failed" in telegram["detail"]


def test_webhook_mode_is_ready_once_the_receiver_listens(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[ANN], ops=True, webhook=True)
    wait_for(lambda: ready_state(stack)[0] == 200, 15, "the bot never became ready")
    assert ready_state(stack)[1]["checks"]["telegram"]["detail"] == "webhook receiver listening"


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


def test_a_taken_port_stops_the_start_with_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HTTP_"))}
        env.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", HTTP_PORT=str(port))
        done = subprocess.run(
            [sys.executable, "-m", "bot", "--channel", "terminal", "--env-file", "/dev/null",
             "--data-dir", str(tmp_path / "data"), "--log-file", str(tmp_path / "bot.log")],
            env=env, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
    assert done.returncode == 2
    assert f"HTTP_PORT: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
