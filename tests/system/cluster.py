"""Several `python -m bot` processes serving one token in webhook mode, as an operator runs
them (`docs/DEPLOYMENT.md`): one PostgreSQL (`DATABASE_URL`), one public webhook URL on a
round-robin load balancer (`tests/fakes/load_balancer.py`) in front of one port per process,
the same webhook secret everywhere. Each process has its own work folder and data dir.

Used by the system test of several processes and by `bench/several_processes.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bot.adapters.postgres.inbox import LOCKS
from tests.fakes.background_server import free_port
from tests.fakes.load_balancer import RoundRobinBalancer
from tests.fakes.telegram_server import FakeTelegramServer
from tests.system.harness import LLM_KEY, REPO, TELEGRAM_TOKEN, BotProcess

WEBHOOK_SECRET = "cluster-webhook-secret"


@dataclass
class Cluster:
    """The processes, the balancer in front of them, and the database they share."""

    bots: list[BotProcess]
    balancer: RoundRobinBalancer
    database_url: str | None
    """None: the bot on files (one process)."""

    def stop(self) -> None:
        for bot in self.bots:
            if bot.alive and bot.process is not None:
                os.kill(bot.process.pid, signal.SIGCONT)  # one a test froze and then failed
                bot.stop()
        self.balancer.stop()

    def waiting_updates(self) -> list[dict[str, Any]]:
        """Updates journaled and not handled yet, with what their turns recorded."""
        assert self.database_url is not None
        with psycopg.connect(self.database_url) as connection:
            rows = connection.execute(
                "SELECT body, answer FROM telegram_inbox WHERE NOT done AND body IS NOT NULL"
            ).fetchall()
        return [{"update": json.loads(body), "answer": answer} for body, answer in rows]

    def waiting_in_chats_of(self, bot: BotProcess) -> list[int]:
        """Ids of the updates waiting in the chats whose locks `bot`'s process holds, as
        operators see them: `pg_locks` by the `application_name` the bot's connections carry."""
        assert bot.process is not None and self.database_url is not None
        with psycopg.connect(self.database_url) as connection:
            rows = connection.execute(
                "SELECT update_id FROM telegram_inbox WHERE NOT done"
                " AND (slot::bigint + 4294967296) %% 4294967296 IN ("
                "  SELECT l.objid::text::bigint FROM pg_locks l"
                "  JOIN pg_stat_activity a ON a.pid = l.pid"
                "  WHERE l.locktype = 'advisory' AND l.classid::text::bigint = %s"
                "  AND a.application_name = %s)",
                (LOCKS, f"memory-bot pid {bot.process.pid}"),
            ).fetchall()
        return [row[0] for row in rows]


def write_bot_folder(
    workdir: Path,
    env: dict[str, str],
    allowed: list[int],
    config: dict[str, dict[str, Any]] | None = None,
) -> None:
    """A work folder as an operator makes one: `.env`, `preferences/` with the runtime
    config (`allowed` users, no rate limit to speak of), and an empty `data/`."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "preferences", workdir / "preferences")
    path = workdir / "preferences" / "runtime-config.json"
    runtime = json.loads(path.read_text())
    runtime["telegram"]["allowedUsers"] = allowed
    runtime["rateLimit"]["messagesPerMinute"] = 10_000
    for section, values in (config or {}).items():
        runtime.setdefault(section, {}).update(values)
    path.write_text(json.dumps(runtime, indent=2))
    (workdir / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))


def start_cluster(
    root: Path,
    telegram: FakeTelegramServer,
    llm_base_url: str,
    database_url: str | None,
    processes: int,
    allowed: list[int],
    log_level: str = "INFO",
    config: dict[str, dict[str, Any]] | None = None,
) -> Cluster:
    """`processes` bots in webhook mode behind one balancer, started one after the other;
    without `database_url`, on files (then one process: the data dir is its alone)."""
    ports = [free_port() for _ in range(processes)]
    balancer = RoundRobinBalancer([f"http://127.0.0.1:{port}" for port in ports])
    balancer.start()
    bots = []
    for number, port in enumerate(ports):
        workdir = root / f"process{number}"
        env = {
            "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
            "TELEGRAM_API_URL": telegram.api_url,
            "TELEGRAM_WEBHOOK_URL": f"http://127.0.0.1:{balancer.port}/telegram",
            "TELEGRAM_WEBHOOK_PORT": str(port),
            "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "OPENAI_API_KEY": LLM_KEY,
            "OPENAI_BASE_URL": llm_base_url,
            "LOG_LEVEL": log_level,
        }
        if database_url is not None:
            env["DATABASE_URL"] = database_url
        write_bot_folder(workdir, env, allowed, config)
        bot = BotProcess(workdir)
        bot.start(telegram)
        bots.append(bot)
    return Cluster(bots, balancer, database_url)
