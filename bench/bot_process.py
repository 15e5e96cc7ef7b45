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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.fakes.telegram_server import FakeTelegramServer

REPO = Path(__file__).resolve().parent.parent


@asynccontextmanager
async def telegram_bot_process(
    telegram: FakeTelegramServer, llm_base_url: str, allowed_users: list[int]
) -> AsyncIterator[Path]:
    """The bot polling `telegram`, its LLM (and speech) at `llm_base_url`, answering
    `allowed_users` with no rate limit (what is measured is the bot, not the limit); stopped
    with SIGTERM on exit. Yields its runtime config's path: edits apply while it runs."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "preferences", work / "preferences")
        config_path = work / "preferences" / "runtime-config.json"
        config = json.loads(config_path.read_text())
        config["telegram"]["allowedUsers"] = allowed_users
        config["rateLimit"]["messagesPerMinute"] = 10_000
        config_path.write_text(json.dumps(config))
        argv = ["-m", "bot", "--channel", "telegram", "--env-file", "/dev/null"]
        argv += ["--data-dir", str(work / "data"), "--config", str(config_path)]
        argv += ["--prompts-dir", str(work / "preferences" / "prompts")]
        async with _process(argv, telegram, llm_base_url):
            yield config_path


@asynccontextmanager
async def bare_bot_process(
    telegram: FakeTelegramServer, llm_base_url: str, *options: str
) -> AsyncIterator[None]:
    """`bench/bare_bot.py` polling `telegram`, its LLM at `llm_base_url`; `options` are its
    command-line options. Stopped with SIGTERM on exit."""
    async with _process(["-m", "bench.bare_bot", *options], telegram, llm_base_url):
        yield


@asynccontextmanager
async def _process(
    argv: list[str], telegram: FakeTelegramServer, llm_base_url: str
) -> AsyncIterator[None]:
    """`python <argv>` with the Bot API and LLM addresses in its environment, nothing else of
    ours (no token or key of the shell it runs in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env.update(
        TELEGRAM_BOT_TOKEN=telegram.token,
        TELEGRAM_API_URL=telegram.api_url,
        OPENAI_BASE_URL=llm_base_url,
        LOG_LEVEL="WARNING",
    )
    process = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, cwd=REPO)
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
