"""Per-turn overhead of the bot: a turn through the whole app versus a bare LLM call.

Both talk to the same local OpenAI-compatible server, which answers after a fixed delay, in
the same run and interleaved, so machine noise hits both alike. The overhead is what the bot
adds around the LLM call: config check, session load and its durable save, memory recall,
prompt building, history budgeting, reply routing.

    python -m bench.turn_overhead [--turns 60] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI, DefaultAioHttpClient

from bench.report import Figure, median, percentile, print_table
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.settings import Settings
from tests.fakes.openai_server import FakeOpenAiServer, Reply

REPO = Path(__file__).resolve().parent.parent


class NullChannel:
    """Drops replies, remembering when the last one was sent."""

    name = "bench"
    sent_at = 0.0

    async def send(self, address, text):
        self.sent_at = time.perf_counter()

    def open_stream(self, address):
        return None


async def measure(turns: int, delay: float) -> list[Figure]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAiServer(
            responder=lambda body: Reply(text="a short answer", delay=delay)
        ) as server,
    ):
        work = Path(tmp)
        shutil.copytree(REPO / "preferences", work / "preferences")
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            openai_base_url=server.base_url,
            data_dir=work / "data",
            runtime_config_path=work / "preferences" / "runtime-config.json",
            prompts_dir=work / "preferences" / "prompts",
        )
        app = BotApp.build(settings)
        # The same transport as the bot's adapter, so the figure is the bot's own overhead.
        bare = AsyncOpenAI(
            api_key="k",
            base_url=server.base_url,
            max_retries=0,
            http_client=DefaultAioHttpClient(),
        )
        channel = NullChannel()
        app_times: list[float] = []
        reply_times: list[float] = []
        bare_times: list[float] = []
        for i in range(turns + 5):
            started = time.perf_counter()
            await bare.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": f"question {i}"}]
            )
            bare_ms = (time.perf_counter() - started) * 1000
            message = IncomingMessage(ChatAddress("bench", str(i % 10)), "u", f"question {i}")
            started = time.perf_counter()
            await app.handle(message, channel)
            app_ms = (time.perf_counter() - started) * 1000
            if i >= 5:  # warm-up: connections, imports, caches
                bare_times.append(bare_ms)
                app_times.append(app_ms)
                reply_times.append((channel.sent_at - started) * 1000)
        await bare.close()
        await app.aclose()

    overheads = [a - b for a, b in zip(app_times, bare_times, strict=True)]
    p50_overhead = median(app_times) - median(bare_times)
    ratio = median(app_times) / median(bare_times)
    name = "turn overhead"
    bare_name = f"bare AsyncOpenAI call p50 ({delay * 1000:.0f} ms LLM)"
    return [
        Figure(name, bare_name, median(bare_times), "ms", ""),
        Figure(name, "app turn p50 (until saved)", median(app_times), "ms", ""),
        Figure(name, "ratio app/bare (p50)", ratio, "", "< 1.02", ratio < 1.02),
        Figure(name, "overhead p50", p50_overhead, "ms", "< 3 ms", p50_overhead < 3),
        Figure(name, "overhead p99 (paired)", percentile(overheads, 99), "ms", ""),
        Figure(
            name,
            "overhead until reply sent p50",
            median(reply_times) - median(bare_times),
            "ms",
            "",
        ),
    ]


def run(turns: int = 60, delay: float = 0.2) -> list[Figure]:
    return asyncio.run(measure(turns, delay))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--delay", type=float, default=0.2, help="LLM answer delay in seconds")
    args = parser.parse_args()
    print_table(run(args.turns, args.delay))


if __name__ == "__main__":
    main()
