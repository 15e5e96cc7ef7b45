"""The app with `DATABASE_URL`: sessions in PostgreSQL, not in files; a database that is
down at start stops it with a clear line, one lost while it runs costs no reply."""

import contextlib
import logging
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from bot.adapters.postgres.database import Database, DatabaseUnavailable
from bot.adapters.postgres.sessions import PostgresSessionStore
from bot.adapters.postgres.usage import PostgresUsageLedger
from bot.app import BotApp
from tests.conftest import REPO, edit_runtime_config
from tests.e2e.conftest import ALICE, BOB, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply
from tests.fakes.postgres import free_port

pytestmark = pytest.mark.postgres


async def stored_session(url: str, key: str) -> list[str | None]:
    database = Database(url)
    await database.open()
    try:
        session = await PostgresSessionStore(database).load(key)
    finally:
        await database.close()
    return [m.content for m in session.messages]


async def calls_today(url: str) -> dict[str, int]:
    database = Database(url)
    await database.open()
    try:
        ledger = PostgresUsageLedger(database)
        await ledger.load()
        everyone = await ledger.today_all()
    finally:
        await database.close()
    return {who: sum(t.calls for t in models.values()) for who, models in everyone.items()}


@contextlib.asynccontextmanager
async def running_app(settings, fake_llm, url: str) -> AsyncIterator[BotApp]:
    """The app on the fake LLM with `DATABASE_URL` set, started, and closed after."""
    settings.openai_base_url = fake_llm.base_url
    settings.database_url = url
    app = BotApp.build(settings)
    await app.start()
    try:
        yield app
    finally:
        await app.aclose()


async def test_sessions_live_in_the_database_and_new_and_forget_work_there(
    settings, fake_llm, database_url
):
    async with running_app(settings, fake_llm, database_url) as app:
        channel = RecordingChannel()
        await app.handle(say(ALICE, "first message"), channel)
        await app.handle(say(BOB, "bob's own words"), channel)
        assert await stored_session(database_url, ALICE.session_key) == [
            "first message",
            "echo: first message",
        ]
        assert not (settings.data_dir / "sessions").exists(), "nothing in files"
        assert not (settings.data_dir / "usage").exists()

        await app.handle(say(ALICE, "/new"), channel)
        assert await stored_session(database_url, ALICE.session_key) == []
        await app.handle(say(ALICE, "after new"), channel)
        assert [m["content"] for m in fake_llm.requests[-1]["messages"][1:]] == ["after new"]

        await app.handle(say(ALICE, "/forget all"), channel)
        await app.handle(say(ALICE, "/forget confirm"), channel)
        assert "messages in conversations" in channel.texts()[-1]
        assert await app.sessions.count_for("user-alice") == 0
        assert await stored_session(database_url, BOB.session_key) == [
            "bob's own words",
            "echo: bob's own words",
        ]


async def test_a_database_down_at_start_stops_the_app_with_a_clear_error(settings, fake_llm):
    settings.openai_base_url = fake_llm.base_url
    settings.database_url = f"postgresql://bot:hunter2-secret@127.0.0.1:{free_port()}/bot"
    app = BotApp.build(settings)
    with pytest.raises(DatabaseUnavailable) as refused:
        await app.start()
    await app.aclose()
    message = str(refused.value)
    assert "Cannot connect to the database bot@127.0.0.1:" in message
    assert "DATABASE_URL" in message and "hunter2-secret" not in message


def test_python_m_bot_refuses_to_start_without_its_database(workdir):
    url = f"postgresql://bot:hunter2-secret@127.0.0.1:{free_port()}/bot"
    env = {
        "PATH": "/usr/bin:/bin",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "DATABASE_URL": url,
        "BOT_DATA_DIR": str(workdir / "data"),
        "BOT_RUNTIME_CONFIG": str(workdir / "preferences" / "runtime-config.json"),
        "BOT_PROMPTS_DIR": str(workdir / "preferences" / "prompts"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot", "--channel", "terminal", "--env-file", "/dev/null"],
        cwd=REPO,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Cannot connect to the database bot@127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr
    logged = (workdir / "data" / "bot.log").read_text()
    assert "hunter2-secret" not in done.stderr + done.stdout + logged


async def test_a_database_lost_mid_run_costs_no_reply_and_catches_up(
    settings, fake_llm, own_postgres, caplog
):
    caplog.set_level(logging.INFO)
    url = own_postgres.create_database()
    async with running_app(settings, fake_llm, url) as app:
        channel = RecordingChannel()
        await app.handle(say(ALICE, "before the outage"), channel)
        own_postgres.pause()
        await app.handle(say(ALICE, "during the outage"), channel)
        await app.handle(say(BOB, "a chat first seen during it"), channel)
        await app.handle(say(ALICE, "/status"), channel)
        assert channel.texts()[:3] == [
            "echo: before the outage",
            "echo: during the outage",
            "echo: a chat first seen during it",
        ]
        # The second turn went on from the first, as the process last saw it.
        assert [m["content"] for m in fake_llm.requests[1]["messages"][1:]] == [
            "before the outage",
            "echo: before the outage",
            "during the outage",
        ]
        assert "⚠ Database unreachable" in channel.texts()[-1]
        assert "2 unsaved session(s)" in channel.texts()[-1]
        await app.handle(say(ALICE, "/status", operator=True), channel)
        assert f"(bot_test@127.0.0.1:{own_postgres.port}/" in channel.texts()[-1]
        assert own_postgres.password not in channel.texts()[-1]
        await app.handle(say(BOB, "/new"), channel)
        assert "/new failed this time" in channel.texts()[-1], "said, not left unanswered"
        down = [r for r in caplog.records if "[Database] cannot reach" in r.getMessage()]
        assert len(down) == 1 and not any(r.exc_info for r in caplog.records)
        assert not [r for r in caplog.records if r.name.startswith("psycopg")], "one line"

        own_postgres.resume()
        await app.disk.retry()  # what the app's retry task does every 30 s
        assert await stored_session(url, ALICE.session_key) == [
            "before the outage",
            "echo: before the outage",
            "during the outage",
            "echo: during the outage",
        ]
        assert await stored_session(url, BOB.session_key) == [
            "a chat first seen during it",
            "echo: a chat first seen during it",
        ]
        assert any("answers again" in r.getMessage() for r in caplog.records)
        assert await calls_today(url) == {"user-alice": 2, "user-bob": 1}, "usage rows too"
        await app.handle(say(ALICE, "/status"), channel)
        assert "Database" not in channel.texts()[-1]
        await app.handle(say(ALICE, "/status", operator=True), channel)
        assert "Database: PostgreSQL bot_test@127.0.0.1" in channel.texts()[-1]


async def test_a_users_budget_and_usage_are_one_across_processes(settings, fake_llm, database_url):
    """Two processes on one database: what one spent counts in the other's budget and
    `/usage`, so the budget is the user's, not each process's."""
    edit_runtime_config(settings.runtime_config_path, usage={"dailyTokenBudget": 250})
    fake_llm.script(Reply(text="one", usage=(100, 50)), Reply(text="two", usage=(100, 50)))
    channel = RecordingChannel()
    async with (
        running_app(settings, fake_llm, database_url) as first,
        running_app(settings, fake_llm, database_url) as second,
    ):
        await first.handle(say(ALICE, "first"), channel)
        await second.handle(say(ALICE, "second"), channel)  # 300 tokens now, over two processes
        calls = len(fake_llm.requests)
        await first.handle(say(ALICE, "third"), channel)
        assert "today's budget of 250 tokens" in channel.texts()[-1]
        assert len(fake_llm.requests) == calls, "no LLM call at the budget"
        await second.handle(say(ALICE, "/usage"), channel)
        assert "Daily budget: 300 of 250 tokens used" in channel.texts()[-1]
