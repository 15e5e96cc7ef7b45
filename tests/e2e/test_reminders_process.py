"""`python -m bot` killed with `kill -9` before a reminder's time, restarted after it while the
LLM is down: the reminder arrives once, and never again."""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.storage.sessions import JsonSessionStore
from tests.conftest import edit_runtime_config
from tests.e2e.test_telegram_process import ALICE, start_quiet_bot
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer

LEAD_SECONDS = 10
"""From setting the reminder to its time: enough for one turn and the kill, even on a busy
machine."""


def handled_all(inbox: Path) -> bool:
    """Every update in the Telegram inbox has its `done` line (its turn is over)."""
    entries = [json.loads(line) for line in inbox.read_text().splitlines() if line.strip()]
    received = {e["update"]["update_id"] for e in entries if "update" in e}
    return received <= {e["done"] for e in entries if "done" in e}


def set_a_reminder_then_kill(
    proc: subprocess.Popen[bytes],
    telegram: FakeTelegramServer,
    llm: FakeOpenAiServer,
    handled: Callable[[], bool],
) -> datetime:
    """Alice has the bot (its LLM scripted) set "call Olga" `LEAD_SECONDS` ahead, then the bot
    is killed with `kill -9` before that time, once the turn is over (not in the instant after
    Telegram took the reply, which a restart would answer again); returns the time."""
    telegram.send_text(ALICE, "hi")  # the bot is up: the lead below is for one turn
    telegram.wait_for_sync(lambda: "echo: hi" in telegram.texts(ALICE.id), 60)
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=LEAD_SECONDS)
    add = {"action": "add", "text": "call Olga", "at": due.isoformat()}
    llm.script(Reply(tool_calls=[("reminders", json.dumps(add))]), Reply(text="Set."))
    telegram.send_text(ALICE, "remind me in ten seconds to call Olga")
    telegram.wait_for_sync(lambda: "Set." in telegram.texts(ALICE.id), 30)
    telegram.wait_for_sync(handled, 30)  # every update's turn is over (its inbox says so)
    proc.kill()
    proc.wait(30)
    assert datetime.now(UTC) < due, "killed before the due time"
    return due


def test_kill_9_before_the_due_time_then_a_restart_delivers_it_exactly_once(workdir):
    edit_runtime_config(
        workdir / "preferences" / "runtime-config.json", telegram={"allowedUsers": [ALICE.id]}
    )
    book = workdir / "data" / "reminders" / "reminders.json"
    with FakeTelegramServer() as telegram, FakeOpenAiServer() as llm:

        def start() -> subprocess.Popen[bytes]:
            return start_quiet_bot(workdir, telegram, llm)

        def reminders_said() -> list[str]:
            return [t for t in telegram.texts(ALICE.id) if t.startswith("⏰")]

        proc = start()
        try:
            inbox = workdir / "data" / "telegram" / "inbox.jsonl"
            due = set_a_reminder_then_kill(proc, telegram, llm, lambda: handled_all(inbox))
            assert reminders_said() == []
            assert stat.S_IMODE(book.stat().st_mode) == 0o600
            assert json.loads(book.read_text())["reminders"][0]["text"] == "call Olga"

            telegram.wait_for_sync(lambda: datetime.now(UTC) > due, LEAD_SECONDS + 5)
            llm.responder = lambda body: Reply(status=503, error_message="the LLM is down")
            asked = len(llm.requests)
            proc = start()  # after the due time, with the LLM down
            telegram.wait_for_sync(lambda: len(reminders_said()) == 1, 30)
            assert len(llm.requests) == asked, "delivered without an LLM call"
            telegram.wait_for_sync(lambda: json.loads(book.read_text())["reminders"] == [], 30)
            proc.kill()
            proc.wait(30)

            proc = start()  # a third run finds nothing left to send
            telegram.send_text(ALICE, "/reminders")
            telegram.wait_for_sync(
                lambda: any("No reminders" in t for t in telegram.texts(ALICE.id)), 30
            )
        finally:
            proc.kill()
            proc.wait(30)
    (delivered,) = reminders_said()
    assert delivered.startswith("⏰ Reminder: call Olga")
    store = JsonSessionStore(workdir / "data" / "sessions")
    saved = json.loads(store.path_for(f"telegram:{ALICE.id}").read_text())
    assert [m["content"] for m in saved["messages"]].count(delivered) == 1
