"""Memory has a scope: what a member says in private never reaches a group's prompt, and what
a group says stays in the group; with the real LightRAG behind both memory layers."""

from tests.fakes.telegram_server import Chat
from tests.system.harness import section

EVA, FINN = 4101, 4102
TEAM = Chat.group(-100_4100, "Platform team")


def memory_of(prompt: str) -> str:
    return section(prompt, "Memory") + section(prompt, "Relevant Memory")


def test_private_memory_stays_out_of_the_group_and_the_groups_stays_in_it(
    make_stack, shared_lightrag
):
    stack = make_stack(shared_lightrag, allowed=[EVA, FINN])
    mention = f"@{stack.telegram.bot.username}"
    already = stack.lightrag.wait_until_processed(0)["processed"]
    stack.converse(EVA, "My bank card PIN is 4512, keep it safe.")
    stack.converse(EVA, "I am allergic to peanuts.")
    stack.say(FINN, f"{mention} Our standup is at 9:15 in room Fjord.", chat=TEAM)
    stack.telegram.wait_for_sync(lambda: len(stack.telegram.texts(TEAM.id)) == 1, 30)
    stack.wait_indexed(already + 3)

    # In the group, Eva's private facts are nowhere in the prompt the group's reply comes from.
    for question in ("what is my PIN?", "what am I allergic to?"):
        before = len(stack.telegram.texts(TEAM.id))
        stack.say(EVA, f"{mention} {question}", chat=TEAM)
        stack.telegram.wait_for_sync(lambda b=before: len(stack.telegram.texts(TEAM.id)) > b, 30)
        prompt = stack.last_system_prompt()
        assert "4512" not in prompt and "peanut" not in prompt.lower(), prompt

    # The group recalls what was said in it, from both layers after the session is new.
    before = len(stack.telegram.texts(TEAM.id))
    stack.say(FINN, "/new", chat=TEAM)
    stack.say(FINN, f"{mention} When is our standup?", chat=TEAM)
    stack.telegram.wait_for_sync(lambda: len(stack.telegram.texts(TEAM.id)) >= before + 2, 30)
    assert "9:15" in memory_of(stack.last_system_prompt())

    # Eva in private: her own facts, never the group's.
    assert "fresh conversation" in stack.ask(EVA, "/new")
    stack.converse(EVA, "What is my card PIN?")
    assert "4512" in memory_of(stack.last_system_prompt())
    stack.converse(EVA, "When is the standup?")
    assert "9:15" not in stack.last_system_prompt()
