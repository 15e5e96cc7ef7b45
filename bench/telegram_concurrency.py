"""Chat concurrency through the Telegram channel, and the bot against a bare one.

Our bot runs as users start it (`python -m bot`, its own process, default config: streaming
on, so private chats see drafts) and polls the emulated Bot API; a bare python-telegram-bot
bot (`bench/bare_bot.py`: one streamed OpenAI call and one sendMessage per message) runs the
same way against an emulated Bot API of its own; one local OpenAI-compatible server answers
both. The servers live in this process, so their CPU is not charged to the bots. The two
bots are measured in turns, round after round, so both see the same machine; every figure
is a median of the rounds, with its spread:

- 100 chats each send one message to an LLM that answers after 1 s; the wall time until every
  chat has its reply, as a ratio to one chat's turn alone (target under 1.5: chats do not wait
  for each other), and that ratio against the bare bot's (target ≤ 1.05).
- 10 chats send 10 messages each at once to an LLM with random delays; each chat must get its
  answers in the order it asked (our bot; the bare bot does not keep order).
- Messages per second with an LLM that answers at once (20 chats x 10 messages): the bot's
  own cost per message, against the bare bot's (target ≥ 0.8: ours sends each chat call
  through the SDK's public request path, about a millisecond of CPU a call); and the CPU
  time the bot's process used per message meanwhile, which a busy machine disturbs less
  than wall time. Its messages ("burst 0 10001 #3") are under the 50-character floor of
  `bot/small_talk.py`, so memory stays empty: `bench/memory_load.py` measures the bot with
  memory in use and real chat messages.

    python -m bench.telegram_concurrency [--chats 100] [--delay 1.0] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bot_process import RunningBot, bare_bot_process, telegram_bot
from bench.report import Figure, print_table
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer, User

REPO = Path(__file__).resolve().parent.parent
NAME = "telegram concurrency"
FIRST_USER = 10_000
THROUGHPUT_TARGET = 0.8
BURST_TARGET = 1.05


class Llm:
    """Echoes the question after `delay()` seconds; the delay can change between phases."""

    def __init__(self) -> None:
        self.delay: Callable[[], float] = lambda: 0.0

    def __call__(self, body: dict[str, Any]) -> Reply:
        question = body["messages"][-1]["content"]
        return Reply(text=echo(question), delay=self.delay())


@dataclass
class Contender:
    """A bot under measurement, the emulated Bot API it polls, and what was measured of it."""

    name: str
    telegram: FakeTelegramServer
    process: RunningBot
    keeps_order: bool
    solo: list[float] = field(default_factory=list)
    bursts: list[float] = field(default_factory=list)
    per_second: list[float] = field(default_factory=list)
    cpu_per_message: list[float] = field(default_factory=list)
    """Milliseconds of the bot process's CPU per message, in the throughput rounds: its own
    cost, which a busy machine disturbs less than the wall time."""

    @property
    def burst_ratio(self) -> float:
        return statistics.median(self.bursts) / statistics.median(self.solo)


async def until_answered(
    contender: Contender, expected: dict[int, list[str]], within: float = 120.0
) -> float:
    """Seconds until every chat shows its expected answers (as final texts), in order when
    the bot keeps order, else in any order."""
    started = time.perf_counter()
    telegram = contender.telegram

    def done() -> bool:
        # One pass over what was sent, not one per chat: this check runs every 20 ms in the
        # process that also serves the fake APIs, and must not slow them down.
        shown: dict[int, list[str]] = {chat: [] for chat in expected}
        for message in telegram.messages():
            if message.chat_id in shown:
                shown[message.chat_id].append(message.text)
        if contender.keeps_order:
            return all(shown[chat][-len(texts) :] == texts for chat, texts in expected.items())
        return all(
            Counter(shown[chat][-len(texts) :]) == Counter(texts)
            for chat, texts in expected.items()
        )

    await telegram.wait_for(done, within)
    return time.perf_counter() - started


def send_all(telegram: FakeTelegramServer, messages: dict[int, list[str]]) -> None:
    """Each user sends their messages in order; users interleaved, as they would arrive."""
    longest = max(len(texts) for texts in messages.values())
    for index in range(longest):
        for user_id, texts in messages.items():
            if index < len(texts):
                telegram.send_text(User(user_id, f"User {user_id}"), texts[index])


def echo(question: str) -> str:
    """What `Llm` answers to `question`."""
    return f"echo: {question}"


async def all_at_once(
    contender: Contender, asked: dict[int, list[str]], answer: Callable[[str], str] = echo
) -> float:
    """Seconds from sending every message to every chat having all its answers (`answer` of
    each message, as the LLM gives them)."""
    send_all(contender.telegram, asked)
    expected = {user: [answer(text) for text in texts] for user, texts in asked.items()}
    return await until_answered(contender, expected)


async def measure(chats: int, delay: float, rounds: int) -> list[Figure]:
    llm = Llm()
    users = list(range(FIRST_USER, FIRST_USER + chats))
    with (
        FakeTelegramServer() as ours_api,
        FakeTelegramServer() as bare_api,
        FakeOpenAiServer(responder=llm) as llm_server,
    ):
        async with (
            telegram_bot(ours_api, llm_server.base_url, users) as ours_process,
            bare_bot_process(bare_api, llm_server.base_url) as bare_process,
        ):
            ours = Contender("ours", ours_api, ours_process, keeps_order=True)
            bare = Contender("bare bot", bare_api, bare_process, keeps_order=False)
            for contender in (ours, bare):
                await all_at_once(contender, {users[0]: ["warm-up"]})
            await _bursts(ours, bare, llm, users, delay, rounds)
            in_order, asked = await _order(ours, llm, users[:10])
            await _throughput(ours, bare, llm, users[:20], rounds)
    return _figures(ours, bare, chats, delay, in_order, asked)


async def _bursts(
    ours: Contender, bare: Contender, llm: Llm, users: list[int], delay: float, rounds: int
) -> None:
    """One chat alone, then every chat at once, for each bot in turn, `rounds` times; which
    bot goes first alternates, so neither always runs after the other."""
    llm.delay = lambda: delay
    for n in range(rounds):
        for contender in (ours, bare) if n % 2 == 0 else (bare, ours):
            contender.solo.append(await all_at_once(contender, {users[0]: [f"solo {n}"]}))
            burst = {user: [f"at once {n}"] for user in users}
            contender.bursts.append(await all_at_once(contender, burst))


async def _order(ours: Contender, llm: Llm, users: list[int]) -> tuple[int, int]:
    """Chats (of `users`) whose ten answers came in the order asked, under random delays."""
    rng = random.Random(42)
    llm.delay = lambda: rng.uniform(0.0, 0.05)
    asked = {user: [f"order {user} #{n}" for n in range(10)] for user in users}
    await all_at_once(ours, asked)
    in_order = sum(
        ours.telegram.texts(user)[-10:] == [f"echo: {text}" for text in texts]
        for user, texts in asked.items()
    )
    return in_order, len(asked)


async def _throughput(
    ours: Contender, bare: Contender, llm: Llm, users: list[int], rounds: int
) -> None:
    llm.delay = lambda: 0.0
    for n in range(rounds):
        for contender in (ours, bare) if n % 2 == 0 else (bare, ours):
            burst = {user: [f"burst {n} {user} #{i}" for i in range(10)] for user in users}
            messages = sum(len(texts) for texts in burst.values())
            cpu = contender.process.cpu_seconds()
            wall = await all_at_once(contender, burst)
            cpu = contender.process.cpu_seconds() - cpu
            contender.per_second.append(messages / wall)
            contender.cpu_per_message.append(1000 * cpu / messages)


def _spread(values: list[float]) -> str:
    return f"median of {len(values)}, {min(values):.3g}..{max(values):.3g}"


def _figures(
    ours: Contender, bare: Contender, chats: int, delay: float, in_order: int, asked: int
) -> list[Figure]:
    figures = []
    for bot in (ours, bare):
        figures += [
            Figure(
                NAME,
                f"{bot.name}: one chat alone ({delay:g} s LLM, {_spread(bot.solo)})",
                statistics.median(bot.solo),
                "s",
                "",
            ),
            Figure(
                NAME,
                f"{bot.name}: {chats} chats at once, until all answered ({_spread(bot.bursts)})",
                statistics.median(bot.bursts),
                "s",
                "",
            ),
        ]
        ratios = [burst / solo for burst, solo in zip(bot.bursts, bot.solo, strict=True)]
        target = "< 1.5" if bot is ours else ""
        figures.append(
            Figure(
                NAME,
                f"{bot.name}: ratio {chats} chats / one chat (per round: {_spread(ratios)})",
                bot.burst_ratio,
                "",
                target,
                bot.burst_ratio < 1.5 if bot is ours else None,
            )
        )
        figures.append(
            Figure(
                NAME,
                f"{bot.name}: messages per second (instant LLM, 20 chats x 10, short "
                f"messages, memory stays empty; {_spread(bot.per_second)})",
                statistics.median(bot.per_second),
                "msg/s",
                "",
            )
        )
        figures.append(
            Figure(
                NAME,
                f"{bot.name}: CPU per message, bot process, memory stays empty "
                f"({_spread(bot.cpu_per_message)})",
                statistics.median(bot.cpu_per_message),
                "ms",
                "",
            )
        )
    figures.append(
        Figure(
            NAME,
            "ours: chats answered in order (10 chats x 10 messages)",
            in_order,
            f"/ {asked}",
            "all",
            in_order == asked,
        )
    )
    throughput = statistics.median(ours.per_second) / statistics.median(bare.per_second)
    burst = ours.burst_ratio / bare.burst_ratio
    cpu = statistics.median(ours.cpu_per_message) / statistics.median(bare.cpu_per_message)
    figures += [
        Figure(NAME, "ours / bare bot: CPU per message (memory stays empty)", cpu, "x", ""),
        Figure(
            NAME,
            "ours / bare bot: messages per second (memory stays empty)",
            throughput,
            "x",
            f">= {THROUGHPUT_TARGET}",
            throughput >= THROUGHPUT_TARGET,
        ),
        Figure(
            NAME,
            f"ours / bare bot: {chats}-chat burst ratio",
            burst,
            "x",
            f"<= {BURST_TARGET}",
            burst <= BURST_TARGET,
        ),
    ]
    return figures


def run(chats: int = 100, delay: float = 1.0, rounds: int = 3) -> list[Figure]:
    return asyncio.run(measure(chats, delay, rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--delay", type=float, default=1.0, help="LLM answer delay in seconds")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per bot and figure")
    args = parser.parse_args()
    print_table(run(args.chats, args.delay, args.rounds))


if __name__ == "__main__":
    main()
