"""The bot as users start it (`python -m bot`, its own process) in a temporary folder, for the
benchmarks that measure it through the emulated Bot API; and the bare bot they compare it
with (`bench/bare_bot.py`), started the same way."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.telegram_server import FakeTelegramServer

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class RunningBot:
    """A bot process a benchmark started."""

    pid: int
    launched: float
    """`time.perf_counter()` just before the process was launched."""
    config_path: Path | None = None
    """Our bot's runtime config (edits apply while it runs); None for the bare bot."""

    def cpu_seconds(self) -> float:
        """CPU time the process has used so far, all its threads, user and system (Linux)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        """Resident memory of the process now, in MB (Linux `VmRSS`)."""
        return self._status_mb("VmRSS")

    def private_mb(self) -> float:
        """Of `rss_mb`, the anonymous memory (Linux `RssAnon`): the process's own heap, which
        no other process shares. The rest is pages of files (libraries, the embedded model's
        weights, memory-mapped), which every process mapping the same file shares and the
        kernel can drop and read again."""
        return self._status_mb("RssAnon")

    def _status_mb(self, field: str) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no {field} for process {self.pid}")


@asynccontextmanager
async def telegram_bot_process(
    telegram: FakeTelegramServer, llm_base_url: str, allowed_users: list[int]
) -> AsyncIterator[Path]:
    """`telegram_bot`, yielding its runtime config's path."""
    async with telegram_bot(telegram, llm_base_url, allowed_users) as bot:
        assert bot.config_path is not None
        yield bot.config_path


@asynccontextmanager
async def telegram_bot(
    telegram: FakeTelegramServer,
    llm_base_url: str,
    allowed_users: list[int],
    fill_data: Callable[[Path], None] | None = None,
) -> AsyncIterator[RunningBot]:
    """The bot polling `telegram`, its LLM (and speech) at `llm_base_url`, answering
    `allowed_users` with no rate limit and no Telegram send budget (what is measured is the
    bot, not the limits: the bare bot has neither, and the emulated Bot API enforces none);
    stopped with SIGTERM on exit. `fill_data` gets its data folder before it starts, to put
    what users left there earlier (their memory)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if fill_data is not None:
            fill_data(work / "data")
        shutil.copytree(REPO / "preferences", work / "preferences")
        config_path = work / "preferences" / "runtime-config.json"
        config = json.loads(config_path.read_text())
        config["telegram"]["allowedUsers"] = allowed_users
        config["rateLimit"]["messagesPerMinute"] = 10_000
        config["telegram"]["messagesPerSecond"] = 0
        config_path.write_text(json.dumps(config))
        argv = ["-m", "bot", "--channel", "telegram", "--env-file", "/dev/null"]
        argv += ["--data-dir", str(work / "data"), "--config", str(config_path)]
        argv += ["--prompts-dir", str(work / "preferences" / "prompts")]
        async with _process(argv, telegram, llm_base_url) as (pid, launched):
            yield RunningBot(pid, launched, config_path)


@asynccontextmanager
async def bare_bot_process(
    telegram: FakeTelegramServer, llm_base_url: str, *options: str
) -> AsyncIterator[RunningBot]:
    """`bench/bare_bot.py` polling `telegram`, its LLM at `llm_base_url`; `options` are its
    command-line options. Stopped with SIGTERM on exit."""
    async with _process(["-m", "bench.bare_bot", *options], telegram, llm_base_url) as launch:
        yield RunningBot(*launch)


@asynccontextmanager
async def _process(
    argv: list[str], telegram: FakeTelegramServer, llm_base_url: str
) -> AsyncIterator[tuple[int, float]]:
    """`python <argv>` with the Bot API and LLM addresses in its environment, nothing else of
    ours (no token or key of the shell it runs in); yields its pid and when it was launched."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env.update(
        TELEGRAM_BOT_TOKEN=telegram.token,
        TELEGRAM_API_URL=telegram.api_url,
        OPENAI_BASE_URL=llm_base_url,
        LOG_LEVEL="WARNING",
    )
    launched = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, cwd=REPO)
    try:
        yield process.pid, launched
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
