"""`kill -9` in the middle of a load run, then a restart: nothing damaged, nothing lost."""

import json
import random

from bot.i18n.catalogue.telegram import gave_up
from tests.fakes.llm import echo
from tests.fakes.openai_server import Reply
from tests.system.harness import SystemStack

CHATS, MESSAGES = 20, 10
FIRST_USER = 7000


def damaged_files(data) -> list[str]:
    """Every data file that does not parse: JSON files whole, JSONL files line by line."""
    bad = []
    for path in data.rglob("*.json"):
        try:
            json.loads(path.read_text())
        except ValueError:
            bad.append(str(path))
    for path in data.rglob("*.jsonl"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                try:
                    json.loads(line)
                except ValueError:
                    bad.append(f"{path}:{number}")
    return bad


def load_then_kill(stack: SystemStack, users: list[int], messages: int, seed: int):
    """Every chat sends `messages` messages; `kill -9` once 40% are answered. Returns what was
    asked, and what Telegram had handed over (acknowledged) when the bot died."""
    rng = random.Random(seed)
    stack.llm.latency = lambda: rng.uniform(0.05, 0.3)
    asked = {user: [f"Crash test {n} in chat {user}, please note it." for n in range(messages)]
             for user in users}  # fmt: skip
    for n in range(messages):
        for user in users:
            stack.say(user, asked[user][n])
    answered = lambda: sum(len(stack.replies(user)) for user in users)  # noqa: E731
    stack.telegram.wait_for_sync(lambda: answered() >= len(users) * messages * 0.4, within=120)

    stack.bot.kill()
    not_acknowledged = {u["message"]["text"] for u in stack.telegram.queued_updates()}
    acknowledged = {
        user: [t for t in texts if t not in not_acknowledged] for user, texts in asked.items()
    }
    assert sum(map(len, acknowledged.values())) > answered(), "some were in flight at the kill"
    assert damaged_files(stack.data) == []
    return asked, acknowledged


def restart_and_check_every_message(stack: SystemStack, asked, acknowledged) -> None:
    """After a restart: every message answered, in order per chat, at most one duplicate per
    chat; every acknowledged message has its turn in the session on disk."""
    stack.bot.start(stack.telegram)
    expected = {user: [echo(t) for t in texts] for user, texts in asked.items()}

    def all_answered() -> bool:
        return all(set(expected[u]) <= set(stack.replies(u)) for u in asked)

    stack.telegram.wait_for_sync(all_answered, within=180)
    for user in asked:
        replies = stack.replies(user)
        first_seen = sorted(expected[user], key=replies.index)
        assert first_seen == expected[user], f"chat {user} answered out of order"
        saved = stack.wait_session(user, 2 * len(acknowledged[user]))
        for text in acknowledged[user]:
            assert ("user", text) in saved and ("assistant", echo(text)) in saved
    duplicates = sum(len(stack.replies(u)) - len(asked[u]) for u in asked)
    assert duplicates <= len(asked), f"{duplicates} messages answered twice"


def test_kill_9_mid_load_then_restart_loses_and_damages_nothing(make_stack, own_lightrag):
    users = list(range(FIRST_USER, FIRST_USER + CHATS))
    stack: SystemStack = make_stack(own_lightrag, allowed=users)
    asked, acknowledged = load_then_kill(stack, users, MESSAGES, seed=9)
    queued_at_kill = [
        json.loads(path.read_text())["file_source"]
        for path in (stack.data / "rag" / "queue").glob("*.json")
    ]

    restart_and_check_every_message(stack, asked, acknowledged)
    stack.wait_queue_empty(within=120)  # what was queued for LightRAG at the kill went out
    on_server = set(stack.lightrag.file_sources())
    assert set(queued_at_kill) <= on_server, "documents queued at the kill reached LightRAG"
    stack.converse(users[0], "Are you back for good?")
    assert damaged_files(stack.data) == []
    assert stack.bot.runs == 2


def test_kill_9_in_webhook_mode_loses_no_message_telegram_handed_over(make_stack, shared_lightrag):
    users = list(range(FIRST_USER + 100, FIRST_USER + 106))
    stack: SystemStack = make_stack(shared_lightrag, allowed=users, webhook=True)
    asked, acknowledged = load_then_kill(stack, users, 8, seed=11)
    restart_and_check_every_message(stack, asked, acknowledged)
    assert stack.telegram.calls("getUpdates") == [], "webhook mode throughout"
    assert damaged_files(stack.data) == []


def test_a_message_whose_turn_dies_twice_gets_an_apology_not_a_third_try(
    make_stack, shared_lightrag
):
    """A message that takes the bot down with it (here: `kill -9` mid-turn, twice) must not
    take it down at every start: the third start answers it with an apology and goes on."""
    user = FIRST_USER + 200
    stack: SystemStack = make_stack(shared_lightrag, allowed=[user], rag={"enabled": False})
    llm = stack.llm_server
    for run in (1, 2):
        llm.script(Reply(text="never sent", delay=60))
        if run == 1:
            stack.say(user, "The message the bot dies on.")
        else:
            stack.bot.start(stack.telegram)  # replays it from the inbox
        stack.telegram.wait_for_sync(lambda n=run: len(llm.requests) == n, within=60)
        stack.bot.kill()  # mid-turn, as a crash would

    stack.bot.start(stack.telegram)
    assert stack.wait_replies(user, 1) == [gave_up()]
    assert stack.converse(user, "Are you still there?") == echo("Are you still there?")
    assert len(llm.requests) == 3, "the message itself was not tried a third time"
    assert "was cut short 2 times" in stack.bot.log()
    assert damaged_files(stack.data) == []
