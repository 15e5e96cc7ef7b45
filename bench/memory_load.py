"""The bot as users run it: memory already full, real chat messages, against the bare bot.

Our bot runs as `python -m bot` with the shipped config (embedded e5 model, rule extraction;
rate limit and Telegram send budget off, as `bench/bot_process.py` does, since the bare bot has
neither). Before it starts, each of its 20 users' memory folder holds 0, 1k or 10k items,
written through memory's own stores (`UserFiles`, `VectorFile`): the exchanges of the long-
conversation set's dev split, each with its e5 vector (the bot's own `embed_with`), repeated
with a number to reach the count (a repeat shares its text's vector; a search over 10k rows
costs the same whatever they hold). Messages are the user messages of the set's test split, so
they have real chat lengths: most pass the 50-character floor and are remembered, and recall
runs for every one. Each user sends one message first, so their memory is loaded before the
measurement (a load happens once per user after a start).

Per case, both bots are started fresh, each against an emulated Bot API of its own and one
instant LLM, and measured in turns (`--rounds`, alternating who goes first): messages per
second (20 chats x 10 messages), the bot process's CPU per message, its RSS after the load,
and the time from process start to its first getUpdates. Beside RSS, its anonymous part
(`RssAnon`): the process's own memory, without the pages of files (libraries, and the e5
weights, which are memory-mapped and shared by every process that maps them; this benchmark's
own process maps them too, so PSS would halve them). The case of memory empty at start is
there for comparison; `telegram_concurrency` keeps its old figures (short messages that
memory never keeps, so it stays empty), labelled as such.

    python -m bench.memory_load [--rounds 3] [--items 0 1000 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.bot_process import RunningBot, bare_bot_process, telegram_bot
from bench.longconv_data import load_conversations
from bench.report import Figure, print_table
from bench.telegram_concurrency import Contender, all_at_once
from bot.adapters.embeddings.embedded import EmbeddedEmbedder, embed_with, load_e5
from bot.conversation import utc_now
from bot.memory.episodes import episode
from bot.memory.files import UserFiles
from bot.memory.model import MemoryItem
from bot.memory.vectors import VectorFile
from bot.small_talk import is_trivial_exchange
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer

NAME = "memory load"
CHATS = 20
PER_CHAT = 10
FIRST_USER = 20_000
CASES = (0, 1_000, 10_000)
CPU_TARGET = 3.0
RSS_TARGET_MB = 150.0
START_TARGET_S = 1.0
IDLE_SECONDS = 0.3
"""A bot that used no CPU for this long (30 clock ticks) has finished its background work."""
ZERO_WIDTH_SPACE = "\u200b"
MARKDOWN_LIST = re.compile(r"^- ", re.MULTILINE)


def plain(markdown: str) -> str:
    """`markdown` without the marks our bot would render as formatting (emphasis, list items)."""
    return MARKDOWN_LIST.sub("• ", markdown.replace("*", ""))


class RealAnswers:
    """An instant LLM that answers each message the users send with the set's own answer to
    it, without Markdown (`plain`): our bot renders it as formatting, the bare bot sends it as
    it is, and both must show the same text."""

    def __init__(self, sent: list[tuple[str, str]]) -> None:
        self.answers = dict(sent)

    def __call__(self, body: dict[str, Any]) -> Reply:
        return Reply(text=self.answer(body["messages"][-1]["content"]))

    def answer(self, question: str) -> str:
        return self.answers.get(question, f"echo: {question}")


@dataclass
class Measured:
    """One bot in one case: its start-up, and per round its throughput and CPU per message."""

    start_seconds: float
    contender: Contender
    rss_mb: float = 0.0
    private_mb: float = 0.0
    per_second: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


def exchanges(split: str) -> list[tuple[str, str]]:
    """Each user message of `split` with the assistant's answer that followed it."""
    pairs = []
    for conversation in load_conversations(split=split):
        for session in conversation.sessions:
            for said, answer in itertools.pairwise(session.messages):
                if said.role == "user" and answer.role == "assistant":
                    pairs.append((said.text, answer.text))
    return pairs


def numbered(texts: list[str], count: int, mark: Callable[[int], str]) -> list[tuple[int, str]]:
    """`count` texts taken from `texts` in turn, each with its index there; a text's k-th
    repeat gets `mark(k)` appended, so no two are the same."""
    seen: Counter[str] = Counter()
    chosen = []
    for n in range(count):
        at = n % len(texts)
        text = texts[at]
        chosen.append((at, text + mark(seen[text]) if seen[text] else text))
        seen[text] += 1
    return chosen


def memory_items(pairs: list[tuple[str, str]], count: int) -> list[tuple[MemoryItem, int]]:
    """`count` episodes made of `pairs` in turn, one an hour back from now, each with the
    index of the pair it came from. A repeat is numbered, " (2)": the same words twice would
    be one item."""
    now = utc_now()
    items = []
    saids = numbered([said for said, _ in pairs], count, lambda k: f" ({k})")
    for n, (at, said) in enumerate(saids):
        when = now - timedelta(hours=count - n)
        items.append((episode(said, pairs[at][1], f"turn:bench:{n}", when, None), at))
    return items


def sent_messages(pairs: list[tuple[str, str]], count: int) -> list[tuple[str, str]]:
    """`count` messages users send, from `pairs` in turn, each with the answer the LLM gives
    it. The set repeats its chatter ("hey it's me again") far more than people do, and each
    round takes more messages than it has; a repeat gets zero-width spaces, which keep it small
    talk or not as it was but make it a new question, whose vector recall cannot find cached."""
    saids = numbered([said for said, _ in pairs], count, lambda k: ZERO_WIDTH_SPACE * k)
    return [(said, plain(pairs[at][1])) for at, said in saids]


def write_memory(folder: Path, count: int, pairs: list[tuple[str, str]], model: object) -> Path:
    """One user's memory folder of `count` items with their vectors, as the bot writes them."""
    files = UserFiles(folder, "template")
    items = memory_items(pairs, count)
    files.append([item for item, _ in items])
    used = sorted({at for _, at in items})
    vectors = embed_with(model, [pairs[at][0] for at in used])
    row = {at: n for n, at in enumerate(used)}
    matrix = np.stack([vectors[row[at]] for _, at in items])
    model_id = EmbeddedEmbedder.model_id
    VectorFile.of(files.directory, model_id, matrix.shape[1]).append(
        [item.id for item, _ in items], matrix
    )
    return files.directory


def copies_for(template: Path | None, users: list[int]) -> Callable[[Path], None]:
    """Fills a data folder with a copy of `template` as each user's memory (none if None)."""

    def fill(data: Path) -> None:
        if template is None:
            return
        for user in users:
            shutil.copytree(template, data / "memory" / f"u-{user}")

    return fill


async def started(
    stack: AsyncExitStack,
    runner: Callable[[FakeTelegramServer], AbstractAsyncContextManager[RunningBot]],
) -> Measured:
    """A bot started by `runner` against a fresh emulated Bot API (both closed with `stack`),
    timed from launching its process to its first getUpdates."""
    telegram = stack.enter_context(FakeTelegramServer())
    process = await stack.enter_async_context(runner(telegram))
    await telegram.wait_for(lambda: telegram.arrivals("getUpdates") > 0, 60)
    start = time.perf_counter() - process.launched
    return Measured(start, Contender("", telegram, process, keeps_order=False))


@dataclass(frozen=True)
class Load:
    """What the users send and what the LLM answers them."""

    messages: list[str]
    llm: RealAnswers
    llm_url: str
    rounds: int

    def warm_up(self, users: list[int]) -> dict[int, list[str]]:
        """One message from each user, the first of the messages."""
        return {user: [self.messages[i]] for i, user in enumerate(users)}

    def burst(self, users: list[int], n: int) -> dict[int, list[str]]:
        """Round `n`'s messages: each user's next `PER_CHAT`, after the warm-up's."""
        first = len(users) * (1 + n * PER_CHAT)
        return {
            user: self.messages[first + i * PER_CHAT : first + (i + 1) * PER_CHAT]
            for i, user in enumerate(users)
        }


async def measure_case(count: int, template: Path | None, load: Load) -> tuple[Measured, Measured]:
    """Ours and the bare bot with `count` items per user: start, warm-up, rounds of load."""
    users = _users()
    fill = copies_for(template, users)
    async with AsyncExitStack() as stack:
        ours = await started(stack, lambda api: telegram_bot(api, load.llm_url, users, fill))
        bare = await started(stack, lambda api: bare_bot_process(api, load.llm_url))
        warm_up = load.warm_up(users)
        for bot in (ours, bare):
            await all_at_once(bot.contender, warm_up, load.llm.answer)
        for n in range(load.rounds):
            for bot in (ours, bare) if n % 2 == 0 else (bare, ours):
                await _one_round(bot, load.burst(users, n), load.llm.answer)
        for bot in (ours, bare):
            bot.rss_mb = bot.contender.process.rss_mb()
            bot.private_mb = bot.contender.process.private_mb()
    return ours, bare


async def _one_round(
    bot: Measured, burst: dict[int, list[str]], answer: Callable[[str], str]
) -> None:
    """Every chat sends its messages of `burst` at once: messages per second until the last
    answer, and CPU until the bot is idle again (memory is written after the answer, in the
    background, and that work is part of a message's cost)."""
    total = sum(len(texts) for texts in burst.values())
    process = bot.contender.process
    cpu = await settled_cpu(process)
    wall = await all_at_once(bot.contender, burst, answer)
    cpu = await settled_cpu(process) - cpu
    bot.per_second.append(total / wall)
    bot.cpu_ms.append(1000 * cpu / total)


async def settled_cpu(process: RunningBot, within: float = 60.0) -> float:
    """The process's CPU seconds once it stops using any: unchanged over `IDLE_SECONDS`."""
    deadline = time.monotonic() + within
    before = process.cpu_seconds()
    while time.monotonic() < deadline:
        await asyncio.sleep(IDLE_SECONDS)
        now = process.cpu_seconds()
        if now == before:
            return now
        before = now
    raise AssertionError(f"process {process.pid} still busy after {within:g} s")


def kept_share(load: Load) -> float:
    """The share of the sent messages whose exchange memory keeps (`bot/small_talk.py`)."""
    sent = [text for n in range(load.rounds) for texts in load.burst(_users(), n).values()
            for text in texts]  # fmt: skip
    return sum(not is_trivial_exchange(text, load.llm.answer(text)) for text in sent) / len(sent)


def _users() -> list[int]:
    return list(range(FIRST_USER, FIRST_USER + CHATS))


async def measure(cases: tuple[int, ...], rounds: int) -> list[Figure]:
    pairs = exchanges("dev")
    sent = sent_messages(exchanges("test"), CHATS * (1 + rounds * PER_CHAT))
    answers = RealAnswers(sent)
    model = load_e5()
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAiServer(responder=answers) as server:
        load = Load([said for said, _ in sent], answers, server.base_url, rounds)
        share = kept_share(load)
        figures.append(
            Figure(NAME, "messages sent whose exchange memory keeps", 100 * share, "%", "")
        )
        for count in cases:
            template = write_memory(Path(tmp) / str(count), count, pairs, model) if count else None
            ours, bare = await measure_case(count, template, load)
            figures += case_figures(count, ours, bare)
            if template is not None:
                shutil.rmtree(template.parent)
    return figures


def _median(values: list[float]) -> str:
    return f"median of {len(values)}, {min(values):.3g}..{max(values):.3g}"


def case_figures(count: int, ours: Measured, bare: Measured) -> list[Figure]:
    """The case's rows: each figure of ours next to the bare bot's, then the budget ratios."""
    case = f"{count:,} items/user" if count else "memory empty at start"
    cpu_ours, cpu_bare = statistics.median(ours.cpu_ms), statistics.median(bare.cpu_ms)
    cpu_ratio = cpu_ours / cpu_bare
    rate = statistics.median(ours.per_second) / statistics.median(bare.per_second)
    return [
        Figure(NAME, f"{case}: ours msg/s ({_median(ours.per_second)})",
               statistics.median(ours.per_second), "msg/s", ""),
        Figure(NAME, f"{case}: bare bot msg/s ({_median(bare.per_second)})",
               statistics.median(bare.per_second), "msg/s", ""),
        Figure(NAME, f"{case}: ours / bare msg/s", rate, "x", ""),
        Figure(NAME, f"{case}: ours CPU per message ({_median(ours.cpu_ms)})", cpu_ours, "ms", ""),
        Figure(NAME, f"{case}: bare bot CPU per message ({_median(bare.cpu_ms)})",
               cpu_bare, "ms", ""),
        Figure(NAME, f"{case}: ours / bare CPU per message", cpu_ratio, "x",
               f"<= {CPU_TARGET:g}", cpu_ratio <= CPU_TARGET),
        Figure(NAME, f"{case}: ours RSS after the load (bare bot {bare.rss_mb:.0f} MB)",
               ours.rss_mb, "MB", f"<= {RSS_TARGET_MB:g}", ours.rss_mb <= RSS_TARGET_MB),
        Figure(NAME, f"{case}: ours private memory of that, RssAnon (bare bot "
               f"{bare.private_mb:.0f} MB)", ours.private_mb, "MB", ""),
        Figure(NAME, f"{case}: ours start to first getUpdates (bare bot "
               f"{bare.start_seconds:.2f} s)", ours.start_seconds, "s",
               f"<= {START_TARGET_S:g}", ours.start_seconds <= START_TARGET_S),
    ]  # fmt: skip


def run(cases: tuple[int, ...] = CASES, rounds: int = 3) -> list[Figure]:
    return asyncio.run(measure(cases, rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="measurements per bot and case")
    parser.add_argument("--items", type=int, nargs="+", default=list(CASES), help="per user")
    args = parser.parse_args()
    print_table(run(tuple(args.items), args.rounds))


if __name__ == "__main__":
    main()
