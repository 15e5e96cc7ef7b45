"""Faults while conversations go on: LightRAG down or hanging, the LLM and Telegram failing."""

import time

from tests.fakes.openai_server import Reply
from tests.system.harness import section, wait_for

ANN, BEN = 8001, 8002


def test_lightrag_killed_and_restarted_loses_no_exchange(make_stack, own_lightrag):
    stack = make_stack(own_lightrag, allowed=[ANN, BEN])
    stack.converse(ANN, "Before the outage: the staging cluster is called Heron.")
    stack.wait_indexed(1)

    own_lightrag.kill()
    outage = [
        "During the outage: the nightly backup runs at 02:15 sharp.",
        "During the outage: the VPN gateway is 10.8.0.1 for the whole team.",
    ]
    for text in outage:
        started = time.monotonic()
        stack.converse(ANN, text)
        assert time.monotonic() - started < 4, "a turn does not wait on a dead LightRAG"
    stack.converse(BEN, "Meanwhile another chat goes on as usual.")
    assert stack.queued_documents() >= 2

    own_lightrag.start()
    stack.wait_indexed(4)  # Heron, both outage exchanges, Ben's
    stack.converse(ANN, "When does the nightly backup run?")
    assert "02:15" in section(stack.last_system_prompt(), "Relevant Memory")


def test_a_hanging_lightrag_costs_one_turn_its_time_out_not_every_turn(make_stack, shared_lightrag):
    stack = make_stack(
        shared_lightrag,
        allowed=[ANN],
        rag={"timeoutSeconds": 2, "circuitCooldownSeconds": 60},
    )
    stack.converse(ANN, "A first message while LightRAG still answers.")
    stack.rag.mode = "hang"
    waits = []
    for n in range(6):
        started = time.monotonic()
        stack.converse(ANN, f"Message {n} while LightRAG hangs: still answered?")
        waits.append(time.monotonic() - started)
    assert sum(1 for w in waits if w >= 2) <= 1, waits
    assert sum(waits) < 2 + 6 * 1.5, waits
    # The turns after the first skip LightRAG while its query runs late; its time-out, once
    # reached, opens the circuit.
    wait_for(lambda: "circuit open" in stack.bot.log(), 10, "the hang never opened the circuit")
    stack.rag.mode = "forward"


def test_llm_failures_are_retried_or_explained_and_the_chat_goes_on(make_stack, shared_lightrag):
    stack = make_stack(
        shared_lightrag,
        allowed=[ANN, BEN],
        llm={"requestTimeoutSeconds": 1.5, "retryAttempts": 3, "retryMaxSeconds": 20},
        rag={"enabled": False},
    )
    llm = stack.llm_server

    llm.script(Reply(status=429, headers={"Retry-After": "2"}))
    started = time.monotonic()
    stack.converse(ANN, "Rate limited once, then fine?")
    assert time.monotonic() - started >= 2, "Retry-After is honoured"

    llm.script(Reply(status=500), Reply(status=502))
    stack.converse(ANN, "Two server errors, then fine?")

    llm.script(*[Reply(text="too slow", delay=3)] * 3)
    reply = stack.ask(ANN, "Will the model answer in time?")
    assert "did not answer within 1.5 seconds" in reply

    llm.script(
        Reply(tool_calls=[("calculator", '{"expression": "2+')]), Reply(text="Recovered: 4.")
    )
    assert stack.ask(ANN, "What is 2+2, with a broken tool call first?") == "Recovered: 4."
    assert "not valid JSON" in str(llm.requests[-1]["messages"][-1])

    stack.converse(BEN, "Meanwhile, is another chat fine?")
    saved = stack.wait_session(ANN, 7)
    assert ("user", "Will the model answer in time?") in saved
    assert not any(role == "tool" for role, _ in saved[:6]), "no half-written tool calls"
    assert stack.bot.alive


def test_telegram_flood_waits_and_server_errors_delay_replies_but_lose_none(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[ANN, BEN], rag={"enabled": False})
    stack.telegram.flood_wait("sendMessage", retry_after=2)
    started = time.monotonic()
    stack.converse(ANN, "Will flood control stop this reply?")
    assert time.monotonic() - started >= 2, "the wait Telegram asked for is kept"

    stack.telegram.fail("sendMessage", status=502, times=2)
    stack.telegram.fail("editMessageText", status=500, times=1)
    stack.converse(ANN, "And a Bot API that fails twice?")
    stack.converse(BEN, "Is the other chat still fine?")
    assert len(stack.replies(ANN)) == 2 and len(stack.replies(BEN)) == 1
    assert stack.bot.alive
