"""The Markdown screen as a person sees it, on a terminal emulated with its scrollback: an
answer longer than the screen, streamed piece by piece, ends up there once, in order."""

import itertools
import os

from bot.adapters.terminal.rich_screen import MarkdownScreen
from tests.fakes.vt import FakeTerminal

ANSWER = (
    "## Shopping\n\n"
    + "\n".join(f"- item number {i} to buy" for i in range(1, 31))
    + "\n\nThat is **all**."
)


def screen_on(terminal: FakeTerminal, rows: int) -> MarkdownScreen:
    """A clock that moves on a minute each time it is read: one update in five is drawn."""
    ticks = itertools.count(step=60.0)
    size = os.terminal_size((60, rows))
    return MarkdownScreen(terminal, lambda: "", lambda: size, lambda: next(ticks))  # type: ignore[arg-type]


def test_a_streamed_answer_longer_than_the_screen_is_shown_once_in_order():
    terminal = FakeTerminal(rows=8)
    screen = screen_on(terminal, rows=8)
    for end in range(5, len(ANSWER), 7):
        screen.show_answer(ANSWER[:end])
    screen.finish_answer(ANSWER)
    shown = terminal.text()
    for i in range(1, 31):
        assert shown.count(f"item number {i} to buy") == 1, i
    assert shown.index("item number 9 ") < shown.index("item number 10 ")
    assert shown.startswith("bot> Shopping") and shown.endswith("That is all.")
    assert "##" not in shown and "**" not in shown


def test_a_new_answer_after_a_tool_call_leaves_the_first_above_it():
    terminal = FakeTerminal(rows=8)
    screen = screen_on(terminal, rows=8)
    screen.show_answer("Let me look that up.")
    screen.show_answer("It is 42.")
    screen.finish_answer("It is 42.")
    assert terminal.text() == "bot> Let me look that up.\nbot> It is 42."


def test_a_reminder_in_the_middle_of_an_answer_keeps_both_whole():
    terminal = FakeTerminal(rows=24)
    screen = screen_on(terminal, rows=24)
    screen.show_answer("First line\nsecond")
    screen.message("⏰ Reminder: stretch")
    screen.finish_answer("First line\nsecond line")
    shown = terminal.text()
    assert shown.count("First line") == 1 and shown.count("⏰ Reminder: stretch") == 1
    assert shown.endswith("second line")
