"""The app with `DATABASE_URL`: reminders and the choices (`/language`, `/remember`) live in
PostgreSQL (another process on another data dir sees them), a reminder set in a process
killed with `kill -9` is delivered once by the next one, and `/readyz` says when the
database is down, and why."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import httpx
import psycopg
import pytest

from bot.adapters.postgres.database import Database
from bot.adapters.postgres.reminders import PostgresReminderBook
from bot.app import BotApp
from tests.conftest import REPO, bot_argv, edit_runtime_config
from tests.e2e.conftest import ALICE, say
from tests.e2e.test_postgres_state import running_app, stored_session
from tests.e2e.test_reminders_process import LEAD_SECONDS, set_a_reminder_then_kill
from tests.e2e.test_telegram_process import ALICE as TELEGRAM_ALICE
from tests.e2e.test_telegram_process import bot_env
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer

pytestmark = pytest.mark.postgres


async def test_readyz_is_503_while_the_database_is_down_and_says_why(
    settings, fake_llm, own_postgres
):
    settings.openai_base_url = fake_llm.base_url
    settings.database_url = own_postgres.create_database()
    settings.http_port = 0
    app = BotApp.build(settings)
    await app.start()
    try:
        assert app.ops is not None and app.ops.port
        url = f"http://127.0.0.1:{app.ops.port}/readyz"
        async with httpx.AsyncClient(timeout=10) as client:

            async def database_check() -> tuple[int, dict, str]:
                response = await client.get(url)
                return response.status_code, response.json()["checks"]["database"], response.text

            async def until(status: int) -> tuple[dict, str]:
                for _ in range(100):  # the report is cached for 2 s
                    code, check, body = await database_check()
                    if code == status:
                        return check, body
                    await asyncio.sleep(0.1)
                raise AssertionError(f"/readyz never answered {status}")

            check, _ = await until(200)
            assert check == {"state": "ok", "detail": "reachable"}
            own_postgres.pause()
            check, body = await until(503)
            assert check["state"] == "down"
            assert check["detail"].startswith("the database")
            assert "cannot be reached" in check["detail"] or "no answer" in check["detail"]
            assert str(own_postgres.port) not in body and own_postgres.password not in body
            own_postgres.resume()
            check, _ = await until(200)
            assert check["state"] == "ok"
    finally:
        await app.aclose()


async def test_a_language_chosen_in_one_process_is_spoken_by_another(
    settings, fake_llm, database_url, tmp_path
):
    other = settings.model_copy(update={"data_dir": tmp_path / "other-data"})
    async with running_app(settings, fake_llm, database_url) as app:
        await app.handle(say(ALICE, "/language ru"), RecordingChannel())
    assert not (settings.data_dir / "languages.json").exists(), "in the database, not a file"
    async with running_app(other, fake_llm, database_url) as app:
        channel = RecordingChannel()
        await app.handle(say(ALICE, "/help"), channel)
        assert channel.texts()[0].startswith("Команды:")


async def test_remember_off_in_one_process_holds_in_another(
    settings, fake_llm, database_url, tmp_path
):
    """`/remember off` is a choice in the database: a second process (its own data dir) stores
    nothing new for that user either, and says so in `/memory`."""
    other = settings.model_copy(update={"data_dir": tmp_path / "other-data"})
    async with running_app(settings, fake_llm, database_url) as app:
        await app.handle(say(ALICE, "/remember off"), RecordingChannel())
    assert not (settings.data_dir / "memory" / "remember-off.json").exists()
    async with running_app(other, fake_llm, database_url) as app:
        channel = RecordingChannel()
        await app.handle(say(ALICE, "My staging server is at 10.0.0.5."), channel)
        await app.memory.drain()
        assert await app.memory.count_for(f"user-{ALICE.chat_id}") == 0
        await app.handle(say(ALICE, "/memory"), channel)
        assert "OFF" in channel.texts()[-1]


def test_a_reminder_set_in_a_killed_process_is_delivered_once_by_another(workdir, database_url):
    """Each process has its own data dir: only the database is shared."""
    edit_runtime_config(
        workdir / "preferences" / "runtime-config.json",
        telegram={"allowedUsers": [TELEGRAM_ALICE.id]},
    )
    other = workdir.parent / "other"
    shutil.copytree(workdir, other)
    with FakeTelegramServer() as telegram, FakeOpenAiServer() as llm:

        def start(where: Path) -> subprocess.Popen[bytes]:
            env = bot_env(telegram, llm, telegram.token) | {"DATABASE_URL": database_url}
            return subprocess.Popen(
                bot_argv(where),
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=REPO,
            )

        def reminders_said() -> list[str]:
            return [t for t in telegram.texts(TELEGRAM_ALICE.id) if t.startswith("⏰")]

        proc = start(workdir)
        try:
            handled = partial(inbox_handled_all, database_url)
            due = set_a_reminder_then_kill(proc, telegram, llm, handled)  # kill -9 before it
            assert reminders_said() == []
            assert not (workdir / "data" / "reminders" / "reminders.json").exists()
            assert [r.text for r in asyncio.run(kept_reminders(database_url))] == ["call Olga"]

            telegram.wait_for_sync(lambda: datetime.now(UTC) > due, LEAD_SECONDS + 5)
            llm.responder = lambda body: Reply(status=503, error_message="the LLM is down")
            asked = len(llm.requests)
            proc = start(other)  # another data dir, after the due time, the LLM down
            telegram.wait_for_sync(lambda: len(reminders_said()) == 1, 30)
            assert len(llm.requests) == asked, "delivered without an LLM call"
            telegram.wait_for_sync(lambda: asyncio.run(kept_reminders(database_url)) == [], 30)
            proc.kill()
            proc.wait(30)

            proc = start(workdir)  # the first data dir again: nothing left to send
            telegram.send_text(TELEGRAM_ALICE, "/reminders")
            telegram.wait_for_sync(
                lambda: any("No reminders" in t for t in telegram.texts(TELEGRAM_ALICE.id)), 30
            )
        finally:
            proc.kill()
            proc.wait(30)
    (delivered,) = reminders_said()
    assert delivered.startswith("⏰ Reminder: call Olga")
    texts = asyncio.run(stored_session(database_url, f"telegram:{TELEGRAM_ALICE.id}"))
    assert texts.count(delivered) == 1


async def kept_reminders(url: str) -> list:
    database = Database(url)
    await database.open()
    try:
        return await PostgresReminderBook(database).all()
    finally:
        await database.close()


def inbox_handled_all(url: str) -> bool:
    """Every update in the Telegram inbox (a table, with `DATABASE_URL`) has been handled."""
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT count(*) FROM telegram_inbox WHERE NOT done").fetchone()
    return row is not None and row[0] == 0
