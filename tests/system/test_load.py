"""Many chats at once against a slow, uneven LLM: every message answered once, in order."""

import random

from tests.fakes.llm import echo

CHATS, MESSAGES = 50, 20
FIRST_USER = 6000


def test_fifty_chats_of_twenty_messages_each_get_every_answer_in_order(make_stack, own_lightrag):
    users = list(range(FIRST_USER, FIRST_USER + CHATS))
    stack = make_stack(own_lightrag, allowed=users)
    rng = random.Random(6)
    stack.llm.latency = lambda: rng.uniform(0.05, 0.5)
    asked = {user: [f"Question {n} from chat {user}: what next?" for n in range(MESSAGES)]
             for user in users}  # fmt: skip
    for n in range(MESSAGES):  # as they would arrive: the chats interleaved
        for user in users:
            stack.say(user, asked[user][n])

    expected = {user: [echo(text) for text in texts] for user, texts in asked.items()}
    stack.telegram.wait_for_sync(
        lambda: all(stack.replies(user) == expected[user] for user in users), within=180
    )
    for user in users:
        saved = stack.wait_session(user, 2 * MESSAGES)
        assert saved == [
            pair for text in asked[user] for pair in (("user", text), ("assistant", echo(text)))
        ]
    assert stack.bot.alive
    log = stack.bot.log()
    assert " ERROR " not in log and "Traceback" not in log, log[-3000:]
    assert all(len(stack.replies(user)) == MESSAGES for user in users), "exactly one reply each"
