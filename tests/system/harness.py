"""The product as it runs for real, on 127.0.0.1, driven as Telegram users drive it.

- the bot: `python -m bot` as its own process, started in a work folder that holds its `.env`
  (secrets), `preferences/` (runtime config, prompts) and `data/`, as an operator starts it;
- Telegram: the emulated Bot API server (`tests/fakes/telegram_server.py`);
- the LLM: a local OpenAI-compatible server that echoes each question after a chosen latency,
  and can be scripted to fail;
- LightRAG: a real `lightrag-server` (its own LLM and embeddings a deterministic local fake),
  reached through a recording proxy that counts the bot's requests and can hang or play dead.

Tests act through `SystemStack`: users write, the bot answers, the files on disk are read.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.rag.ledger import IndexLedger
from tests.fakes.background_server import free_port
from tests.fakes.lightrag_server import LightRagServer
from tests.fakes.llm import echo
from tests.fakes.misbehaving_servers import RecordingProxy
from tests.fakes.openai_server import EchoResponder, FakeOpenAiServer
from tests.fakes.telegram_server import Chat, FakeTelegramServer, User

REPO = Path(__file__).resolve().parents[2]

# Secrets the bot is given; none of them may ever show in a log, a reply or a data file.
TELEGRAM_TOKEN = "987654321:SYS-telegram-SECRET-token-abcdef"
LLM_KEY = "sk-system-SECRET-llm-key-0123456789"
RAG_KEY = "rag-system-SECRET-key-4567"
SECRETS = (TELEGRAM_TOKEN, TELEGRAM_TOKEN.split(":", 1)[1], LLM_KEY, RAG_KEY)


@dataclass
class BotProcess:
    """One run of `python -m bot` in `workdir`; its stderr is the log."""

    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    runs: int = 0

    @property
    def log_path(self) -> Path:
        return self.workdir / "bot.log"

    def start(self, telegram: FakeTelegramServer, within: float = 60) -> None:
        """Start and wait until the bot is about to take updates: it clears any webhook before
        polling, or sets its own in webhook mode."""

        def receiving_calls() -> int:
            return len(telegram.calls("deleteWebhook")) + len(telegram.calls("setWebhook"))

        calls_before = receiving_calls()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "TELEGRAM_", "RAG_", "BOT_", "LOG_LEVEL"))
        }
        # The bot runs in its work folder, so `bot` would come from wherever it is installed;
        # the code under test is the one next to these tests (a git worktree, a checkout).
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot"],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.runs += 1
        telegram.wait_for_sync(lambda: receiving_calls() > calls_before or not self.alive, within)
        assert self.alive, f"the bot exited at start:\n{self.log()[-3000:]}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, within: float = 60) -> int:
        """SIGTERM, as a service manager stops it; its exit code."""
        assert self.process is not None
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(within)

    def kill(self) -> None:
        """SIGKILL: a crash, nothing cleaned up."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@dataclass
class SystemStack:
    """Everything one system test needs, started; see the module docstring."""

    workdir: Path
    telegram: FakeTelegramServer
    llm_server: FakeOpenAiServer
    llm: EchoResponder
    lightrag: LightRagServer
    rag: RecordingProxy
    bot: BotProcess
    users: dict[int, User] = field(default_factory=dict)
    ops_url: str | None = None
    """`http://127.0.0.1:<HTTP_PORT>` when the operators' listener is on."""

    # -- set-up -----------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        workdir: Path,
        telegram: FakeTelegramServer,
        llm_server: FakeOpenAiServer,
        llm: EchoResponder,
        lightrag: LightRagServer,
        rag: RecordingProxy,
        allowed: list[int],
        config: dict[str, dict[str, Any]],
        log_level: str = "INFO",
        webhook: bool = False,
        ops: bool = False,
    ) -> SystemStack:
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copytree(REPO / "preferences", workdir / "preferences")
        env_lines = {
            "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
            "TELEGRAM_API_URL": telegram.api_url,
            "OPENAI_API_KEY": LLM_KEY,
            "OPENAI_BASE_URL": llm_server.base_url,
            "RAG_API_KEY": RAG_KEY,
            "LOG_LEVEL": log_level,
        }
        if webhook:  # Telegram posts updates to the bot instead of being polled
            port = free_port()
            env_lines["TELEGRAM_WEBHOOK_URL"] = f"http://127.0.0.1:{port}/telegram"
            env_lines["TELEGRAM_WEBHOOK_PORT"] = str(port)
            env_lines["TELEGRAM_WEBHOOK_SECRET"] = "system-test-webhook-secret"
        ops_url = None
        if ops:  # /healthz, /readyz and /metrics on a port of their own
            port = free_port()
            env_lines["HTTP_PORT"] = str(port)
            ops_url = f"http://127.0.0.1:{port}"
        (workdir / ".env").write_text("".join(f"{k}={v}\n" for k, v in env_lines.items()))
        stack = cls(workdir, telegram, llm_server, llm, lightrag, rag, BotProcess(workdir))
        stack.ops_url = ops_url
        base = {
            "telegram": {"allowedUsers": allowed},
            "rateLimit": {"messagesPerMinute": 120},
            "rag": {"enabled": True, "url": rag.url, "circuitCooldownSeconds": 2,
                    "indexRetryMaxSeconds": 2, "timeoutSeconds": 5},
        }  # fmt: skip
        for section, values in config.items():
            base.setdefault(section, {}).update(values)
        stack.edit_config(**base)
        return stack

    @property
    def config_path(self) -> Path:
        return self.workdir / "preferences" / "runtime-config.json"

    @property
    def data(self) -> Path:
        return self.workdir / "data"

    def edit_config(self, **sections: dict[str, Any]) -> None:
        """An operator's edit of the runtime config, written in place as an editor does."""
        data = json.loads(self.config_path.read_text())
        for name, values in sections.items():
            data.setdefault(name, {}).update(values)
        self.config_path.write_text(json.dumps(data, indent=2))

    # -- acting as users --------------------------------------------------------------------
    def user(self, user_id: int, name: str | None = None) -> User:
        if user_id not in self.users:
            self.users[user_id] = User(user_id, name or f"User{user_id}", f"user{user_id}")
        return self.users[user_id]

    def say(self, user_id: int, text: str, chat: Chat | None = None) -> int:
        return self.telegram.send_text(self.user(user_id), text, chat=chat)

    def replies(self, chat_id: int) -> list[str]:
        return self.telegram.texts(chat_id)

    def wait_replies(self, chat_id: int, count: int, within: float = 30) -> list[str]:
        self.telegram.wait_for_sync(lambda: len(self.replies(chat_id)) >= count, within)
        return self.replies(chat_id)

    def ask(self, user_id: int, text: str, within: float = 30) -> str:
        """Say `text` and wait for the one reply it gets (a command's, a refusal...)."""
        before = len(self.replies(user_id))
        self.say(user_id, text)
        return self.wait_replies(user_id, before + 1, within)[before]

    def converse(self, user_id: int, text: str, within: float = 30) -> str:
        """Say `text` and wait until the answer reads `echo: <text>` in full (a streamed
        answer is edited several times before it does)."""
        before = len(self.replies(user_id))
        self.say(user_id, text)
        expected = echo(text)
        self.telegram.wait_for_sync(
            lambda: self.replies(user_id)[before : before + 1] == [expected], within
        )
        return self.replies(user_id)[before]

    # -- what is on disk --------------------------------------------------------------------
    def session(self, chat_id: int) -> dict[str, Any]:
        path = self.data / "sessions" / f"{quote(f'telegram:{chat_id}', safe='-_.')}.json"
        return json.loads(path.read_text())

    def session_texts(self, chat_id: int) -> list[tuple[str, str]]:
        return [(m["role"], m["content"]) for m in self.session(chat_id)["messages"]]

    def wait_session(
        self, chat_id: int, messages: int, within: float = 30
    ) -> list[tuple[str, str]]:
        """The session once it holds `messages` messages (it is saved just after the reply)."""

        def saved() -> bool:
            try:
                return len(self.session_texts(chat_id)) >= messages
            except (FileNotFoundError, ValueError):
                return False

        self.telegram.wait_for_sync(saved, within)
        return self.session_texts(chat_id)

    def last_system_prompt(self) -> str:
        return self.llm_server.system_prompts()[-1]

    def queued_documents(self) -> int:
        """Documents in the bot's index queue, not yet accepted by LightRAG."""
        queue = self.data / "rag" / "queue"
        return len(list(queue.glob("*.json"))) if queue.exists() else 0

    def settled(self, user_id: int) -> bool:
        """Whether the bot knows LightRAG's id of each document of `user_id` it indexed: no
        status check of an upload of theirs is left to make."""
        entries = IndexLedger(self.data / "rag" / "ledger").entries(str(user_id))
        return bool(entries) and all(entry.doc_id for entry in entries)

    def wait_queue_empty(self, within: float = 60) -> None:
        self.telegram.wait_for_sync(lambda: self.queued_documents() == 0, within)

    def wait_indexed(self, documents: int, within: float = 90) -> None:
        """Until the bot's queue is empty and LightRAG has processed `documents` in all."""
        self.wait_queue_empty(within)
        self.lightrag.wait_until_processed(documents, within)


def section(prompt: str, heading: str) -> str:
    """The body of `# heading` in a system prompt ("" when absent)."""
    marker = f"\n# {heading}\n"
    if marker not in prompt:
        return ""
    return prompt.split(marker, 1)[1].split("\n# ", 1)[0]


def wait_for(condition: Callable[[], bool], within: float, what: str) -> None:
    """Poll `condition` until it holds; fail with `what` after `within` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)
