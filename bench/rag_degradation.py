"""Turn latency with LightRAG misbehaving, as a ratio to RAG disabled in the same run.

Four bots run side by side, turn by turn, against the same local LLM (200 ms per answer):
RAG disabled (the baseline), and RAG enabled against (a) a refused port, (b) a server that
accepts connections but never answers, (c) a server that answers queries at once but takes
5 s to accept each indexed document. Default runtime config otherwise (10 s RAG timeout).

    python -m bench.rag_degradation [--turns 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.report import Figure, print_table
from bench.turn_overhead import REPO, NullChannel
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.settings import Settings
from tests.fakes.misbehaving_servers import SilentServer, SlowIndexingLightRag, refused_port
from tests.fakes.openai_server import FakeOpenAiServer, Reply

LLM_DELAY = 0.2
INDEX_DELAY = 5.0


def build_app(work: Path, llm_url: str, rag: dict[str, object]) -> BotApp:
    shutil.copytree(REPO / "preferences", work / "preferences")
    config_path = work / "preferences" / "runtime-config.json"
    config = json.loads(config_path.read_text())
    config["rag"].update(rag)
    config_path.write_text(json.dumps(config))
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        openai_base_url=llm_url,
        data_dir=work / "data",
        runtime_config_path=config_path,
        prompts_dir=work / "preferences" / "prompts",
    )
    return BotApp.build(settings)


async def measure(turns: int) -> list[Figure]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAiServer(
            responder=lambda body: Reply(
                text="An answer long enough to be indexed as a real exchange.", delay=LLM_DELAY
            )
        ) as llm,
        SilentServer() as silent,
        SlowIndexingLightRag(INDEX_DELAY) as slow,
    ):
        work = Path(tmp)
        scenarios = {
            "disabled": {"enabled": False},
            "(a) refused port": {"enabled": True, "url": f"http://127.0.0.1:{refused_port()}"},
            "(b) never answers": {"enabled": True, "url": silent.url},
            "(c) indexing takes 5 s": {"enabled": True, "url": slow.url},
        }
        apps = {
            name: build_app(work / str(i), llm.base_url, {**rag, "shutdownDrainSeconds": 0})
            for i, (name, rag) in enumerate(scenarios.items())
        }
        for app in apps.values():
            await app.start()
        times: dict[str, list[float]] = {name: [] for name in apps}
        channel = NullChannel()
        for turn in range(turns):
            for name, app in apps.items():
                text = f"Question {turn}: how should we configure the service called unit-{turn}?"
                message = IncomingMessage(ChatAddress("bench", name), "u1", text)
                started = time.perf_counter()
                await app.handle(message, channel)
                times[name].append(time.perf_counter() - started)
        for app in apps.values():
            await app.aclose()

    base = statistics.mean(times["disabled"])
    figures = [Figure("rag degradation", "RAG disabled, mean turn", base * 1000, "ms", "")]
    for name in ("(a) refused port", "(b) never answers"):
        first = times[name][0]
        rest = statistics.mean(times[name][1:]) / statistics.mean(times["disabled"][1:])
        figures.append(Figure("rag degradation", f"{name}: first turn", first * 1000, "ms", ""))
        figures.append(
            Figure(
                "rag degradation", f"{name}: ratio after 1st turn", rest, "", "< 1.10", rest < 1.10
            )
        )
    ratio_c = statistics.mean(times["(c) indexing takes 5 s"]) / base
    figures.append(
        Figure(
            "rag degradation",
            "(c) indexing takes 5 s: ratio",
            ratio_c,
            "",
            "< 1.05",
            ratio_c < 1.05,
        )
    )
    return figures


def run(turns: int = 20) -> list[Figure]:
    return asyncio.run(measure(turns))


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    print_table(run(parser.parse_args().turns))


if __name__ == "__main__":
    main()
