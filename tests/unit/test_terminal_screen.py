"""The terminal chat's screen in plain text (a pipe, `NO_COLOR`): the answer appended as it
is written, replies printed whole, the prompt drawn again after a reply that came while it
waited."""

import io

from bot.adapters.terminal.channel import TerminalChannel, screen_for
from bot.adapters.terminal.screen import PROMPT, Screen, wants_plain
from bot.commands.registry import Command, CommandRegistry


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def never(call):
    return ""


def test_the_answer_is_appended_as_it_is_written_then_ends_its_line():
    out = io.StringIO()
    screen = Screen(out, tty=False)
    screen.show_answer("Hello")
    screen.show_answer("Hello, wor")
    assert out.getvalue() == "bot> Hello, wor"
    screen.finish_answer("Hello, world.\nBye.")
    assert out.getvalue() == "bot> Hello, world.\n     Bye.\n"


def test_a_new_answer_after_a_tool_call_starts_a_line_of_its_own():
    out = io.StringIO()
    screen = Screen(out, tty=False)
    screen.show_answer("Let me look.")
    screen.show_answer("It is 42.")
    screen.finish_answer("It is 42.")
    assert out.getvalue() == "bot> Let me look.\nbot> It is 42.\n"


def test_a_reply_while_the_prompt_waits_is_followed_by_the_prompt():
    out = io.StringIO()
    screen = Screen(out, tty=False)
    screen.prompt()
    screen.at_prompt = True
    screen.message("⏰ Reminder: stretch")
    assert out.getvalue() == f"{PROMPT}\nbot> ⏰ Reminder: stretch\n{PROMPT}"


def test_on_a_terminal_the_prompt_comes_back_with_what_was_typed():
    out = FakeTty()
    screen = Screen(out, tty=True, typed=lambda: "half a thou")
    screen.at_prompt = True
    screen.message("⏰ Reminder: stretch")
    assert out.getvalue() == f"\r\x1b[Kbot> ⏰ Reminder: stretch\n{PROMPT}half a thou"


def test_plain_text_for_a_pipe_no_color_and_a_dumb_terminal():
    assert wants_plain(io.StringIO(), {"TERM": "xterm"})
    assert wants_plain(FakeTty(), {"TERM": "xterm", "NO_COLOR": "1"})
    assert wants_plain(FakeTty(), {"TERM": "dumb"})
    assert not wants_plain(FakeTty(), {"TERM": "xterm-256color"})


def test_the_terminal_lists_quit_and_has_no_stop():
    registry = CommandRegistry()
    for name in ("new", "stop", "help"):
        registry.register(Command(name, name, never))
    TerminalChannel(io.StringIO(), io.StringIO()).register_commands(registry)
    assert [c.name for c in registry.menu()] == ["new", "help", "quit"]


def test_a_dumb_terminal_gets_no_spinner_and_no_cursor_codes():
    out = FakeTty()
    screen = screen_for(out, lambda: "", {"TERM": "dumb"})
    screen.at_prompt = True
    screen.message("⏰ Reminder: stretch")
    assert "\x1b" not in out.getvalue()


async def test_a_line_that_is_not_text_is_said_so_and_the_chat_goes_on():
    stdin = io.TextIOWrapper(io.BytesIO(b"\xff\xfe broken\nhello\n"), encoding="utf-8")
    out = io.StringIO()
    heard = []

    async def handle(message):
        heard.append(message.text)

    await TerminalChannel(stdin, out).run(handle)
    assert "not readable text" in out.getvalue()
    assert heard == ["hello"]
