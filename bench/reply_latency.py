"""First text and Bot API calls per streamed answer: drafts (private chats) against edits.

The bot runs as its own process against the emulated Bot API and the OpenAI fake, which
streams an answer of 60 words over about 2.6 seconds. For each answer: the time from the
LLM receiving the request to the first text the user can see (the first `sendMessageDraft`,
or the first `sendMessage` of the edited preview), and the Bot API calls that showed it
(drafts, messages, edits, deletions; typing excluded). Drafts and edits run in the same
process, one after the other, switched by `telegram.drafts` in the runtime config.

    python -m bench.reply_latency [--answers 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from typing import Any

from bench.bot_process import telegram_bot_process
from bench.report import Figure, print_table
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer, User

NAME = "reply latency"
USER = User(20_000, "Reader")
ANSWER = " ".join(f"word{i}" for i in range(60))
SHOWING = ("sendMessageDraft", "sendMessage", "editMessageText", "deleteMessage")


class StreamingLlm:
    """Streams `ANSWER` slowly and notes when each request arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.arrivals.append(time.monotonic())
        return Reply(text=ANSWER, chunk_delay=0.05)


async def one_answer(
    telegram: FakeTelegramServer, llm: StreamingLlm, tag: str
) -> tuple[float, int]:
    """Seconds from the LLM request to the first visible text, and the calls that showed it."""
    calls_before = len(telegram.calls())
    asked = len(llm.arrivals)
    answered = len(telegram.texts(USER.id)) + 1
    telegram.send_text(USER, tag)
    await telegram.wait_for(
        lambda: (
            telegram.texts(USER.id)[-1:] == [ANSWER] and len(telegram.texts(USER.id)) >= answered
        ),
        60,
    )
    calls = [c for c in telegram.calls()[calls_before:] if c.method in SHOWING]
    shown = [c.at for c in calls if c.params.get("text")]
    return min(shown) - llm.arrivals[asked], len(calls)


async def measure(answers: int) -> list[Figure]:
    llm = StreamingLlm()
    with FakeTelegramServer() as telegram, FakeOpenAiServer(responder=llm) as llm_server:
        process = telegram_bot_process(telegram, llm_server.base_url, [USER.id])
        async with process as config_path:
            await one_answer(telegram, llm, "warm-up")
            drafts = [await one_answer(telegram, llm, f"draft {n}") for n in range(answers)]
            config = json.loads(config_path.read_text())
            config["telegram"]["drafts"] = False
            config_path.write_text(json.dumps(config))
            edits = [await one_answer(telegram, llm, f"edit {n}") for n in range(answers)]
    first_draft = statistics.median(latency for latency, _ in drafts)
    first_edit = statistics.median(latency for latency, _ in edits)
    return [
        Figure(
            NAME,
            "first text p50, drafts (private chat)",
            first_draft,
            "s",
            "< 0.3",
            first_draft < 0.3,
        ),
        Figure(NAME, "first text p50, edited preview", first_edit, "s", ""),
        Figure(
            NAME,
            "Bot API calls per answer, drafts",
            statistics.median(c for _, c in drafts),
            "",
            "",
        ),
        Figure(
            NAME, "Bot API calls per answer, edits", statistics.median(c for _, c in edits), "", ""
        ),
    ]


def run(answers: int = 8) -> list[Figure]:
    return asyncio.run(measure(answers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=8)
    print_table(run(parser.parse_args().answers))


if __name__ == "__main__":
    main()
