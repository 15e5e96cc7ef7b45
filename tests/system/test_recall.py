"""Facts told in one session are in the prompt after `/new`, from both memory layers."""

import pytest

from tests.system.harness import section

FACTS = [
    "My name is Ingrid Solberg and I live in Bergen.",
    "Our Redis server runs on port 6380 behind Traefik.",
    "Remember that the deploy window is Thursday at 14:00.",
    "I prefer answers in short bullet points.",
]
QUESTIONS = {
    "Which port does our Redis server run on?": "6380",
    "When is the deploy window?": "Thursday",
    "Where do I live?": "Bergen",
}


@pytest.mark.parametrize("style", ["context", "answer"])
def test_facts_from_one_session_reach_the_prompt_after_new(make_stack, shared_lightrag, style):
    user = 4001 if style == "context" else 4002
    stack = make_stack(shared_lightrag, allowed=[user], rag={"retrievalStyle": style})
    already = stack.lightrag.wait_until_processed(0)["processed"]
    for fact in FACTS:
        stack.converse(user, fact)
    stack.wait_indexed(already + len(FACTS))

    assert "fresh conversation" in stack.ask(user, "/new")
    for question, fact in QUESTIONS.items():
        stack.converse(user, question)
        prompt = stack.last_system_prompt()
        short, long = section(prompt, "Memory"), section(prompt, "Relevant Memory")
        assert fact in short + long, (question, prompt)
        assert long, "LightRAG contributed to the prompt"
    assert [role for role, _ in stack.wait_session(user, 6)] == ["user", "assistant"] * 3
    assert "[no-context]" not in stack.last_system_prompt()
