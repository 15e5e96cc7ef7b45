"""`python -m bot` in Telegram, as an operator starts it, against the emulated Bot API."""

import json
import signal
import subprocess
import sys
from pathlib import Path

from bot.config.model import TelegramConfig
from bot.storage.sessions import JsonSessionStore
from tests.conftest import bot_argv, clean_env, edit_runtime_config
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer, User

REPO = Path(__file__).resolve().parents[2]
ALICE = User(1001, "Alice", "alice")
BOB = User(1002, "Bob", "bob")


def bot_env(telegram: FakeTelegramServer, llm: FakeOpenAiServer, token: str) -> dict[str, str]:
    return clean_env(
        TELEGRAM_BOT_TOKEN=token,
        TELEGRAM_API_URL=telegram.api_url,
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_API_KEY="sk-process-secret-777",
    )


def start_quiet_bot(
    workdir: Path, telegram: FakeTelegramServer, llm: FakeOpenAiServer
) -> subprocess.Popen[bytes]:
    """`python -m bot` in Telegram, its output discarded (tests read what Telegram saw)."""
    return subprocess.Popen(
        bot_argv(workdir),
        env=bot_env(telegram, llm, telegram.token),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )


def test_bad_token_exits_with_one_clear_line(workdir):
    with FakeTelegramServer() as telegram, FakeOpenAiServer() as llm:
        result = subprocess.run(
            bot_argv(workdir),
            env=bot_env(telegram, llm, "987654:not-the-right-token"),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "rejected the bot token" in line]
    assert len(errors) == 1 and "TELEGRAM_BOT_TOKEN" in errors[0]
    assert "not-the-right-token" not in result.stderr + result.stdout


def test_answers_then_stops_cleanly_on_sigterm_mid_turn(workdir):
    edit_runtime_config(
        workdir / "preferences" / "runtime-config.json", telegram={"allowedUsers": [ALICE.id]}
    )
    with FakeTelegramServer() as telegram, FakeOpenAiServer() as llm:
        proc = subprocess.Popen(
            bot_argv(workdir),
            env=bot_env(telegram, llm, telegram.token),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        try:
            telegram.send_text(ALICE, "hello")
            telegram.wait_for_sync(lambda: telegram.texts(ALICE.id) == ["echo: hello"], 30)
            llm.script(Reply(text="answered before stopping", delay=1.5))
            telegram.send_text(ALICE, "a slow question")
            telegram.wait_for_sync(lambda: len(llm.requests) == 2, 30)
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, stderr
    assert telegram.texts(ALICE.id) == ["echo: hello", "answered before stopping"]
    assert "Traceback" not in stderr
    for secret in (telegram.token, "sk-process-secret-777"):
        assert secret not in stderr
    store = JsonSessionStore(workdir / "data" / "sessions")
    saved = json.loads(store.path_for(f"telegram:{ALICE.id}").read_text())
    assert [m["content"] for m in saved["messages"]][-2:] == [
        "a slow question",
        "answered before stopping",
    ]


def test_a_kill_while_streaming_leaves_no_half_written_preview_after_the_replay(workdir):
    edit_runtime_config(  # edited previews: a draft is gone by itself 30 s after a kill
        workdir / "preferences" / "runtime-config.json",
        telegram={"allowedUsers": [ALICE.id], "drafts": False},
    )
    long_answer = "A long answer, streamed slowly, word by word. " * 6
    with FakeTelegramServer() as telegram, FakeOpenAiServer() as llm:
        proc = start_quiet_bot(workdir, telegram, llm)
        try:
            llm.script(Reply(text=long_answer, chunk_delay=0.3))  # ~10 s to stream
            telegram.send_text(ALICE, "tell me something long")
            telegram.wait_for_sync(lambda: len(telegram.texts(ALICE.id)) == 1, 30)  # a preview
            # ... and its id noted with the update: a kill in the instant between Telegram
            # showing a preview and the inbox noting it leaves that preview (docs/TELEGRAM.md).
            inbox = workdir / "data" / "telegram" / "inbox.jsonl"
            telegram.wait_for_sync(lambda: '"preview"' in inbox.read_text(), 30)
            proc.kill()
            proc.wait(30)
            preview = telegram.texts(ALICE.id)[0]
            assert preview.strip() != long_answer.strip(), "killed mid-stream"

            llm.script(Reply(text="the whole answer, after the restart"))
            proc = start_quiet_bot(workdir, telegram, llm)
            telegram.wait_for_sync(
                lambda: "the whole answer, after the restart" in telegram.texts(ALICE.id), 30
            )
        finally:
            proc.kill()
            proc.wait(30)
    assert telegram.texts(ALICE.id) == ["the whole answer, after the restart"]


def test_a_runaway_calculation_in_one_chat_never_stalls_another(workdir):
    """`round(1, -10**9)` would compute for hours inside one C call: no chat may wait on it."""
    huge = json.dumps({"expression": "round(1, -10**9)"})

    def responder(body):
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply(text=f"calculator said: {last['content']}")
        if last["content"] == "huge":
            return Reply(tool_calls=[("calculator", huge)])
        return Reply(text=f"echo: {last['content']}")

    edit_runtime_config(
        workdir / "preferences" / "runtime-config.json",
        telegram={"allowedUsers": [ALICE.id, BOB.id]},
    )
    with FakeTelegramServer() as telegram, FakeOpenAiServer(responder=responder) as llm:
        proc = start_quiet_bot(workdir, telegram, llm)
        try:
            telegram.send_text(ALICE, "huge")
            telegram.wait_for_sync(lambda: len(llm.requests) == 1, 30)  # the tool call goes out
            telegram.send_text(BOB, "are you there?")
            telegram.wait_for_sync(lambda: telegram.texts(BOB.id) == ["echo: are you there?"], 15)
            telegram.wait_for_sync(lambda: len(telegram.texts(ALICE.id)) == 1, 15)
        finally:
            proc.kill()
            proc.wait(30)
    (answer,) = telegram.texts(ALICE.id)
    assert answer.startswith("calculator said: Error: calculator failed: round's digits")


def test_help_and_docs_name_every_telegram_setting():
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--help"], capture_output=True, text=True, cwd=REPO
    )
    configuration = (REPO / "docs" / "CONFIGURATION.md").read_text()
    example = (REPO / ".env.example").read_text()
    for variable in (
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_API_URL",
        "TELEGRAM_WEBHOOK_URL",
        "TELEGRAM_WEBHOOK_LISTEN",
        "TELEGRAM_WEBHOOK_PORT",
        "TELEGRAM_WEBHOOK_SECRET",
    ):
        assert variable in result.stdout and variable in configuration and variable in example
    for field in TelegramConfig.model_fields.values():
        assert f"`{field.alias}`" in configuration, f"telegram.{field.alias} is undocumented"


def test_an_invalid_setting_is_named_without_its_value(workdir):
    env = clean_env(OPENAI_BASE_URL="http://127.0.0.1:9/v1", TELEGRAM_WEBHOOK_SECRET="no spaces!")
    result = subprocess.run(
        bot_argv(workdir), env=env, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert result.returncode == 2
    assert "TELEGRAM_WEBHOOK_SECRET" in result.stderr
    assert "no spaces!" not in result.stderr and "Traceback" not in result.stderr
