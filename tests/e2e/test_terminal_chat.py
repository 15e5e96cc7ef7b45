"""`python -m bot` as a user starts it: terminal chat, over pipes, against a local LLM server."""

import json
import subprocess
import sys
import threading
from pathlib import Path

from tests.conftest import bot_argv, clean_env
from tests.fakes.openai_server import FakeOpenAiServer, Reply

REPO = Path(__file__).resolve().parents[2]


def run_bot(workdir: Path, stdin: str, env_extra: dict[str, str], timeout: float = 60):
    return subprocess.run(
        bot_argv(workdir),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=clean_env(**env_extra),
    )


def start_bot(workdir: Path, **env_extra: str) -> subprocess.Popen[str]:
    """A terminal bot that keeps running, fed line by line through its stdin."""
    return subprocess.Popen(
        bot_argv(workdir),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=clean_env(**env_extra),
    )


def test_terminal_chat_turns_tools_and_new(workdir):
    with FakeOpenAiServer() as llm:
        llm.script(
            Reply(text="Hello! I'm here."),
            Reply(tool_calls=[("calculator", '{"expression": "6*7"}')]),
            Reply(text="6 times 7 is 42."),
        )
        result = run_bot(
            workdir,
            "hi there\nwhat is 6*7?\n/new\nwho are you?\n/status\n/quit\n",
            {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-e2e-secret-999"},
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "bot> Hello! I'm here." in out
    assert "bot> 6 times 7 is 42." in out
    assert "bot> Started a fresh conversation." in out
    assert "bot> echo: who are you?" in out
    config = workdir / "preferences" / "runtime-config.json"
    assert f"Runtime config: {config} (valid)" in out, "the local user is the operator"
    assert "at 127.0.0.1:" in out
    assert len(llm.requests) == 4
    assert llm.requests[2]["messages"][-1]["content"] == "6*7 = 42"
    assert [m["role"] for m in llm.requests[3]["messages"]] == ["system", "user"]
    log = (workdir / "data" / "bot.log").read_text()
    assert "sk-e2e-secret-999" not in log + out + result.stderr
    sessions = list((workdir / "data" / "sessions").glob("*.json"))
    assert len(sessions) == 1
    assert json.loads(sessions[0].read_text())["messages"][0]["content"] == "who are you?"


def test_runtime_config_edit_applies_without_restart(workdir):
    config_path = workdir / "preferences" / "runtime-config.json"
    with FakeOpenAiServer() as llm:
        proc = start_bot(workdir, OPENAI_BASE_URL=llm.base_url)
        assert proc.stdin and proc.stdout
        proc.stdin.write("one\n")
        proc.stdin.flush()
        assert "echo: one" in _read_until(proc, "echo: one")
        data = json.loads(config_path.read_text())
        data["llm"]["model"] = "hot-swapped"
        config_path.write_text(json.dumps(data))
        proc.stdin.write("two\n/quit\n")
        proc.stdin.flush()
        proc.wait(30)
    assert [r["model"] for r in llm.requests] == ["gpt-4o-mini", "hot-swapped"]


def test_a_second_bot_on_the_same_data_dir_is_refused_until_the_first_is_gone(workdir):
    with FakeOpenAiServer() as llm:
        first = start_bot(workdir, OPENAI_BASE_URL=llm.base_url)
        assert first.stdin
        first.stdin.write("one\n")
        first.stdin.flush()
        assert "echo: one" in _read_until(first, "echo: one")

        second = run_bot(workdir, "two\n/quit\n", {"OPENAI_BASE_URL": llm.base_url})
        assert second.returncode == 2
        assert f"Another bot (pid {first.pid}) is running with the data dir" in second.stderr
        assert "--data-dir" in second.stderr and "Traceback" not in second.stderr
        assert len(llm.requests) == 1, "the refused bot called nobody"

        first.kill()  # kill -9: the operating system releases the lock
        first.wait(10)
        third = run_bot(workdir, "three\n/quit\n", {"OPENAI_BASE_URL": llm.base_url})
    assert third.returncode == 0, third.stderr
    assert "bot> echo: three" in third.stdout


def _read_until(proc, marker: str) -> str:
    seen = ""
    while marker not in seen:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line
    return seen


def test_no_llm_configured_exits_with_instructions(workdir):
    result = run_bot(workdir, "", {})
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr and "OPENAI_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_documents_every_option():
    result = subprocess.run(
        [sys.executable, "-m", "bot", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0
    for option in (
        "--channel",
        "--env-file",
        "--config",
        "--data-dir",
        "--prompts-dir",
        "--skills-dir",
        "--log-level",
        "--log-file",
        "OPENAI_API_KEY",
        "TELEGRAM_BOT_TOKEN",
    ):
        assert option in result.stdout


def test_a_reminder_set_in_the_terminal_is_printed_there_at_its_time(workdir):
    add = {"action": "add", "text": "stretch your legs", "in_minutes": 0.02}
    with FakeOpenAiServer() as llm:
        llm.script(Reply(tool_calls=[("reminders", json.dumps(add))]), Reply(text="Will do."))
        proc = start_bot(workdir, OPENAI_BASE_URL=llm.base_url)
        watchdog = threading.Timer(30, proc.kill)  # a reminder that never comes fails, not hangs
        watchdog.start()
        try:
            assert proc.stdin
            proc.stdin.write("remind me in a moment to stretch\n")
            proc.stdin.flush()
            seen = _read_until(proc, "⏰ Reminder: stretch your legs")
            proc.stdin.write("/quit\n")
            proc.stdin.flush()
            proc.wait(30)
        finally:
            watchdog.cancel()
    assert "bot> Will do." in seen
    assert "bot> ⏰ Reminder: stretch your legs" in seen
    assert len(llm.requests) == 2, "delivered without an LLM call"
