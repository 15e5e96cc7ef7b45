"""`python -m bot` in a terminal as a person uses it: a pseudo-terminal 80 columns wide, the
real bot against the local OpenAI-compatible server. Stderr shares the terminal, as on a
person's screen, so a log line that leaks into the chat shows here."""

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import bot_argv, clean_env
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.pty_terminal import PtyProcess

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SPINNER_FRAME = re.compile("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]")


@pytest.fixture
def llm() -> Iterator[FakeOpenAiServer]:
    with FakeOpenAiServer() as server:
        yield server


def open_chat(workdir: Path, llm: FakeOpenAiServer, **env: str) -> PtyProcess:
    environ = clean_env(OPENAI_BASE_URL=llm.base_url, LANG="en_US.UTF-8", **env)
    environ.pop("NO_COLOR", None)
    chat = PtyProcess(bot_argv(workdir), environ, REPO)
    chat.expect("you> ")
    return chat


def leave(chat: PtyProcess) -> None:
    chat.type("/quit\r")
    assert chat.wait() == 0


def plain(text: str) -> str:
    return ANSI.sub("", text)


def test_an_answer_streams_in_rendered_markdown_after_a_waiting_indicator(workdir, llm):
    started, rest = threading.Event(), threading.Event()
    answer = "## Plan\n\nSome **bold** words and `code`.\n\n- one\n- two\n\nThat is all."
    llm.script(Reply(text=answer, hold=started, pause=rest))
    chat = open_chat(workdir, llm)
    try:
        chat.type("plan my day\r")
        chat.expect(SPINNER_FRAME)  # nothing has arrived yet: the indicator turns
        started.set()
        first = chat.expect("Plan")  # the first words, while the rest is held back
        assert "That is all" not in chat.output
        rest.set()
        shown = chat.expect("That is all.") + chat.expect("you> ")
        leave(chat)
    finally:
        chat.close()
    assert "\x1b[4;35mPlan" in first, "the heading is styled, not `##`"
    assert "\x1b[1mbold\x1b[0m" in shown and "•" in plain(shown)
    assert "##" not in chat.output and "**" not in chat.output and "`" not in chat.output


def test_log_lines_stay_in_the_log_file_and_out_of_the_chat(workdir, llm):
    llm.script(Reply(status=400, error_message="model is having a day"))
    chat = open_chat(workdir, llm)
    try:
        chat.type("hello\r")
        chat.expect("you> ")
        leave(chat)
    finally:
        chat.close()
    log = (workdir / "data" / "bot.log").read_text()
    assert "WARNING" in log and "LLM failed" in log
    assert "WARNING" not in chat.output and "LLM failed" not in chat.output
    assert "Traceback" not in chat.output


def test_a_reminder_printed_at_the_prompt_draws_it_again_with_what_was_typed(workdir, llm):
    add = {"action": "add", "text": "stretch your legs", "in_minutes": 0.02}
    llm.script(Reply(tool_calls=[("reminders", json.dumps(add))]), Reply(text="Will do."))
    chat = open_chat(workdir, llm)
    try:
        chat.type("remind me in a moment to stretch\r")
        chat.expect("Will do.")
        chat.expect("you> ")
        chat.type("half a thou")
        chat.expect("half a thou")
        chat.expect("⏰ Reminder: stretch your legs")
        redrawn = chat.expect("you> half a thou")
        chat.type("ght\r")
        chat.expect("echo: half a thought")  # what was typed before the reminder was kept
        chat.expect("you> ")
        leave(chat)
    finally:
        chat.close()
    assert plain(redrawn).rstrip().endswith("you> half a thou")


def test_help_and_language_say_what_is_true_in_a_terminal(workdir, llm):
    chat = open_chat(workdir, llm)
    try:
        chat.type("/help\r")
        listing = plain(chat.expect("you> "))
        chat.type("/language\r")
        language = plain(chat.expect("you> "))
        leave(chat)
    finally:
        chat.close()
    assert "/quit — leave the chat" in listing
    assert "/stop" not in listing, "nothing can be typed while an answer is written"
    assert "auto: your system's language (LANG)" in language
    assert "Telegram" not in language


def test_ctrl_c_at_the_prompt_leaves_with_the_terminal_as_it_was(workdir, llm):
    chat = open_chat(workdir, llm)
    try:
        chat.type("half typed")
        chat.expect("half typed")
        chat.type("\x03")
        assert chat.wait() == 0
        assert chat.echoes(), "readline's modes are undone"
    finally:
        chat.close()
    assert chat.output.endswith("half typed\r\n"), "the shell's prompt gets a line of its own"
    assert "Traceback" not in chat.output
