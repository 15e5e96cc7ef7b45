"""Chat concurrency through the Telegram channel: many chats at once, order per chat, throughput.

The bot runs as users start it (`python -m bot`, its own process) and polls the emulated Bot
API; a local OpenAI-compatible server answers. Both servers live in this process, so their CPU
is not charged to the bot. Every figure is measured in the same run as its baseline:

- 100 chats each send one message to an LLM that answers after 1 s; the wall time until every
  chat has its reply (median of three such bursts), as a ratio to one chat's turn alone
  (target under 1.5: chats do not wait for each other).
- 10 chats send 10 messages each at once to an LLM with random delays; each chat must get its
  answers in the order it asked.
- Messages per second with an LLM that answers at once: the bot's own cost per message.

    python -m bench.telegram_concurrency [--chats 100] [--delay 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bot_process import telegram_bot_process
from bench.report import Figure, print_table
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer, User

REPO = Path(__file__).resolve().parent.parent
NAME = "telegram concurrency"
FIRST_USER = 10_000


class Llm:
    """Echoes the question after `delay()` seconds; the delay can change between phases."""

    def __init__(self) -> None:
        self.delay: Callable[[], float] = lambda: 0.0

    def __call__(self, body: dict[str, Any]) -> Reply:
        question = body["messages"][-1]["content"]
        return Reply(text=f"echo: {question}", delay=self.delay())


async def until_answered(
    telegram: FakeTelegramServer, expected: dict[int, list[str]], within: float = 120.0
) -> float:
    """Seconds until every chat shows its expected answers (as final texts)."""
    started = time.perf_counter()

    def done() -> bool:
        return all(telegram.texts(chat)[-len(texts) :] == texts for chat, texts in expected.items())

    await telegram.wait_for(done, within)
    return time.perf_counter() - started


def send_all(telegram: FakeTelegramServer, messages: dict[int, list[str]]) -> None:
    """Each user sends their messages in order; users interleaved, as they would arrive."""
    longest = max(len(texts) for texts in messages.values())
    for index in range(longest):
        for user_id, texts in messages.items():
            if index < len(texts):
                telegram.send_text(User(user_id, f"User {user_id}"), texts[index])


async def single_turn(telegram: FakeTelegramServer, user_id: int, tag: str) -> float:
    send_all(telegram, {user_id: [tag]})
    return await until_answered(telegram, {user_id: [f"echo: {tag}"]})


async def measure(chats: int, delay: float) -> list[Figure]:
    llm = Llm()
    users = list(range(FIRST_USER, FIRST_USER + chats))
    with FakeTelegramServer() as telegram, FakeOpenAiServer(responder=llm) as llm_server:
        async with telegram_bot_process(telegram, llm_server.base_url, users):
            return await _phases(telegram, llm, chats, delay)


async def _phases(telegram: FakeTelegramServer, llm: Llm, chats: int, delay: float) -> list[Figure]:
    users = list(range(FIRST_USER, FIRST_USER + chats))
    await single_turn(telegram, users[0], "warm-up")

    llm.delay = lambda: delay
    solo = [await single_turn(telegram, users[0], f"solo {n}") for n in range(3)]
    alone = statistics.median(solo)
    # The median of three bursts: one burst on a shared 2-core machine is at the mercy of
    # whatever else ran in that second.
    bursts = [
        await _all_at_once(telegram, {user: [f"at once {n}"] for user in users}) for n in range(3)
    ]
    wall = statistics.median(bursts)
    ratio = wall / alone

    rng = random.Random(42)
    llm.delay = lambda: rng.uniform(0.0, 0.05)
    order_users = users[:10]
    asked = {user: [f"order {user} #{n}" for n in range(10)] for user in order_users}
    await _all_at_once(telegram, asked)
    in_order = sum(
        telegram.texts(user)[-10:] == [f"echo: {text}" for text in texts]
        for user, texts in asked.items()
    )

    llm.delay = lambda: 0.0
    burst = {user: [f"burst {user} #{n}" for n in range(10)] for user in users[:20]}
    burst_wall = await _all_at_once(telegram, burst)
    per_second = sum(len(texts) for texts in burst.values()) / burst_wall

    return [
        Figure(NAME, f"one chat alone p50 ({delay:g} s LLM)", alone, "s", ""),
        Figure(NAME, f"{chats} chats at once, until all answered (median of 3)", wall, "s", ""),
        Figure(NAME, f"ratio {chats} chats / one chat", ratio, "", "< 1.5", ratio < 1.5),
        Figure(
            NAME,
            "chats answered in order (10 chats x 10 messages)",
            in_order,
            f"/ {len(asked)}",
            "all",
            in_order == len(asked),
        ),
        Figure(NAME, "messages per second (instant LLM, 20 chats x 10)", per_second, "msg/s", ""),
    ]


async def _all_at_once(telegram: FakeTelegramServer, asked: dict[int, list[str]]) -> float:
    send_all(telegram, asked)
    expected = {user: [f"echo: {text}" for text in texts] for user, texts in asked.items()}
    return await until_answered(telegram, expected)


def run(chats: int = 100, delay: float = 1.0) -> list[Figure]:
    return asyncio.run(measure(chats, delay))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--delay", type=float, default=1.0, help="LLM answer delay in seconds")
    args = parser.parse_args()
    print_table(run(args.chats, args.delay))


if __name__ == "__main__":
    main()
