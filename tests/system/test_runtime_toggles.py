"""Edits of preferences/runtime-config.json while the bot runs apply on the next message."""

import time

from tests.system.harness import section, wait_for

ALICE, BOB, CAROL = 5001, 5002, 5003


def test_edits_apply_on_the_next_message_and_a_broken_edit_changes_nothing(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[ALICE, BOB])
    question = "How do we rotate the TLS certificates on the staging cluster?"
    stack.converse(ALICE, question)
    assert stack.rag.requests("/query/data")[-1].body["mode"] == "hybrid"
    stack.wait_queue_empty()  # that exchange is uploaded...
    wait_for(lambda: stack.settled(ALICE), 60, "its document id")  # ...no status check is left

    # RAG off: no request of any kind reaches LightRAG any more, and nothing is queued.
    stack.edit_config(rag={"enabled": False})
    off_at = time.time()
    stack.converse(ALICE, "And how do we renew the domain name for the staging cluster?")
    # Its reply is out, so the turn is over, its recall included; no upload was waiting.
    assert section(stack.last_system_prompt(), "Relevant Memory") == ""
    assert [r.path for r in stack.rag.requests() if r.at >= off_at] == []
    assert stack.queued_documents() == 0

    # RAG on again, in another mode: the next query carries it.
    stack.edit_config(rag={"enabled": True, "queryMode": "local"})
    question = "Which registrar holds the staging domain name?"
    stack.converse(ALICE, question)
    assert stack.rag.requests("/query/data")[-1].body["mode"] == "local"

    # The allowlist: Carol is let in, Bob is refused, without any LLM call for him.
    stack.edit_config(telegram={"allowedUsers": [ALICE, CAROL]})
    stack.converse(CAROL, "Hello, I was just added to the list.")
    llm_calls = len(stack.llm_server.requests)
    refusal = stack.ask(BOB, "Am I still allowed to talk to you?")
    assert "not on its list of users" in refusal and str(BOB) in refusal
    assert len(stack.llm_server.requests) == llm_calls

    # Streaming: on (the default), this private chat sees the answer as a draft while it
    # arrives, then one message; off sends it whole, with no draft.
    stack.llm.chunk_delay = 0.12
    long_question = "Please walk me through the whole certificate rotation, step by step, " * 2
    stack.converse(ALICE, long_question.strip())
    drafts = len(stack.telegram.drafts)
    assert drafts >= 1 and stack.telegram.messages(ALICE)[-1].edits == 0
    stack.edit_config(telegram={"streaming": False})
    stack.converse(ALICE, long_question.strip())
    assert stack.telegram.messages(ALICE)[-1].edits == 0
    assert len(stack.telegram.drafts) == drafts
    stack.llm.chunk_delay = 0.0

    # A broken edit changes nothing, and the log says which file and what is wrong.
    stack.config_path.write_text(stack.config_path.read_text().replace('"local"', '"deep"'))
    stack.converse(CAROL, "Is everything still the same?")
    stack.say(BOB, "And now, am I allowed?")  # still refused: silently, within his cooldown
    stack.converse(CAROL, "Did Bob get anything?")
    assert len(stack.replies(BOB)) == 1
    assert not any("And now" in str(r["messages"]) for r in stack.llm_server.requests)
    assert stack.rag.requests("/query/data")[-1].body["mode"] == "local"
    assert "runtime-config.json rejected" in stack.bot.log()
    assert "rag.queryMode" in stack.bot.log()
    stack.config_path.write_text("{ this is not json")
    stack.converse(CAROL, "Still there?")
    assert "not valid JSON" in stack.bot.log()
