"""The bot as users start it (`python -m bot`, its own process) in a temporary folder, for the
benchmarks that measure it through the emulated Bot API."""

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
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
        env.update(
            TELEGRAM_BOT_TOKEN=telegram.token,
            TELEGRAM_API_URL=telegram.api_url,
            OPENAI_BASE_URL=llm_base_url,
            LOG_LEVEL="WARNING",
        )
        argv = [sys.executable, "-m", "bot", "--channel", "telegram", "--env-file", "/dev/null"]
        argv += ["--data-dir", str(work / "data"), "--config", str(config_path)]
        argv += ["--prompts-dir", str(work / "preferences" / "prompts")]
        bot = await asyncio.create_subprocess_exec(*argv, env=env, cwd=REPO)
        try:
            yield config_path
        finally:
            bot.send_signal(signal.SIGTERM)
            await asyncio.wait_for(bot.wait(), 60)
