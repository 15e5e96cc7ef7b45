"""A voice note against the same words typed: time until the first text of the answer.

The bot runs as users start it (`python -m bot`, its own process) against the emulated Bot
API and a local OpenAI-compatible server whose LLM answers after a fixed delay and whose
speech-to-text answers at once, so the difference is the bot's own cost of a voice note:
getFile, the download, decoding and re-encoding (PyAV), the upload, and the "I heard" line.
Typed and spoken turns alternate in the same run, so machine noise hits both alike; times
are taken from the emulator's own clock, from the update's arrival to the first text of the
answer (the first streamed preview).

    python -m bench.voice_latency [--turns 12] [--seconds 10] [--delay 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from bench.bot_process import telegram_bot_process
from bench.report import Figure, median, print_table
from tests.fakes.audio import voice_note
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer, User

REPO = Path(__file__).resolve().parent.parent
NAME = "voice latency"
USER = User(20_000, "Speaker")
TARGET_RATIO = 1.15


def llm_after(delay: float):
    def answer(body: dict[str, Any]) -> Reply:
        return Reply(text=f"echo: {body['messages'][-1]['content']}", delay=delay)

    return answer


async def first_answer_after(telegram: FakeTelegramServer, sent: float, words: str) -> float:
    """Seconds from `sent` until the bot first showed text of its answer to `words` (a voice
    note's: its labelled transcript)."""
    expected = f"echo: {words}"

    def shown() -> list[float]:
        return [
            m.sent_at
            for m in telegram.messages(USER.id, include_deleted=True)
            if m.sent_at >= sent and m.history and expected.startswith(m.history[0])
        ]

    await telegram.wait_for(lambda: bool(shown()) and telegram.texts(USER.id)[-1] == expected, 60)
    return min(shown()) - sent


async def measure(turns: int, seconds: float, delay: float) -> list[Figure]:
    note = voice_note(seconds)
    with FakeTelegramServer() as telegram, FakeOpenAiServer(responder=llm_after(delay)) as llm:
        async with telegram_bot_process(telegram, llm.base_url, [USER.id]):
            return await _alternate(telegram, llm, note, turns, seconds, delay)


async def _alternate(
    telegram: FakeTelegramServer,
    llm: FakeOpenAiServer,
    note: bytes,
    turns: int,
    seconds: float,
    delay: float,
) -> list[Figure]:
    await _typed(telegram, "warm-up")
    await _spoken(telegram, llm, note, "warm-up spoken")
    typed, spoken = [], []
    for n in range(turns):
        words = f"the recital is on the {n + 1}th at the Grieg Hall"
        typed.append(await _typed(telegram, f"{words} (typed)"))
        spoken.append(await _spoken(telegram, llm, note, f"{words} (spoken)"))
    typed_p50, spoken_p50 = median(typed), median(spoken)
    ratio = spoken_p50 / typed_p50
    return [
        Figure(NAME, f"typed: first answer text p50 ({delay:g} s LLM)", typed_p50, "s", ""),
        Figure(NAME, f"{seconds:g} s voice note: first answer text p50", spoken_p50, "s", ""),
        Figure(NAME, "voice note cost over typed p50", (spoken_p50 - typed_p50) * 1000, "ms", ""),
        Figure(
            NAME,
            "ratio voice note / typed",
            ratio,
            "",
            f"< {TARGET_RATIO}",
            ratio < TARGET_RATIO,
        ),
    ]


async def _typed(telegram: FakeTelegramServer, words: str) -> float:
    sent = time.monotonic()
    telegram.send_text(USER, words)
    return await first_answer_after(telegram, sent, words)


async def _spoken(telegram: FakeTelegramServer, llm: FakeOpenAiServer, note: bytes, words: str):
    llm.script_transcripts(words)
    sent = time.monotonic()
    telegram.send_media(USER, "voice", content=note)
    return await first_answer_after(telegram, sent, f"[Voice note, transcribed]\n{words}")


def run(turns: int = 12, seconds: float = 10.0, delay: float = 0.5) -> list[Figure]:
    return asyncio.run(measure(turns, seconds, delay))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the voice note")
    parser.add_argument("--delay", type=float, default=0.5, help="LLM answer delay in seconds")
    args = parser.parse_args()
    print_table(run(args.turns, args.seconds, args.delay))


if __name__ == "__main__":
    main()
