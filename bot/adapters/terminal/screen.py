"""What the terminal chat shows: replies, the answer as it is written, a waiting indicator,
and the `you> ` prompt redrawn after anything printed while it waits.

Everything is written from the event loop's thread. While the prompt waits for a line the
reader thread owns that line (`at_prompt`); a reply printed then (a reminder) clears it and
draws it again below, with what the person had typed so far.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import TextIO

PROMPT = "you> "
LABEL = "bot> "
INDENT = " " * len(LABEL)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_SECONDS = 0.1
"""The indicator's pace, and how often the answer being written is redrawn at most."""
CLEAR_LINE = "\r\x1b[K"


class Screen:
    """Plain text, as the answer grows: each new piece is appended. Right for a pipe, a
    `NO_COLOR` or dumb terminal; on a terminal a spinner shows until the first words come.

    `typed` gives what the person has typed at the prompt so far (readline's line buffer).
    """

    def __init__(self, out: TextIO, tty: bool, typed: Callable[[], str] = lambda: "") -> None:
        self._out = out
        self._tty = tty
        self._typed = typed
        self.at_prompt = False
        self._painter: asyncio.Task[None] | None = None
        self._spinning = False
        self._shown: str | None = None
        """The answer as far as it is on the screen; None while none is being written."""

    # -- the prompt ---------------------------------------------------------------------
    def prompt(self) -> None:
        """Ask for the next line (readline draws the prompt itself on a terminal)."""
        self._write(PROMPT)

    # -- one message to the bot, from sending it to its reply -------------------------------
    def waiting(self) -> None:
        """A message went to the bot: a spinner shows until its reply starts (terminals only)."""
        if self._tty:
            self._painter = asyncio.get_running_loop().create_task(self._paint())

    def settle(self) -> None:
        """The message is handled: whatever is still drawn (a spinner, an answer cut short
        without a final text) is ended, so the prompt starts on a line of its own."""
        self._stop_painting()
        if self._shown is not None:
            self._write("\n")
            self._shown = None

    def show_answer(self, text: str) -> None:
        """The answer so far (all of it)."""
        self._hide_spinner()
        if self._shown is not None and text.startswith(self._shown):
            self._write(indented(text[len(self._shown) :]))
        else:  # the first words, or a new answer after a tool call
            self._write(("\n" if self._shown is not None else "") + LABEL + indented(text))
        self._shown = text

    def finish_answer(self, text: str) -> None:
        """The final text of the answer: the rest of it, or all of it on its own line when
        it is not what was shown so far."""
        self._stop_painting()
        if self._shown is not None and text.startswith(self._shown):
            self._write(indented(text[len(self._shown) :]) + "\n")
        else:
            self._write(("\n" if self._shown is not None else "") + LABEL + indented(text) + "\n")
        self._shown = None

    # -- a whole reply: a command's, or one that arrives at its own time ------------------
    def message(self, text: str) -> None:
        """Print a whole reply, in the middle of whatever the screen is doing."""
        if self.at_prompt:  # a reminder while the person types: below it, the prompt again
            self._write((CLEAR_LINE if self._tty else "\n") + self._block(text))
            self._write(PROMPT + self._typed())
            return
        self._hide_spinner()
        if self._shown is not None:  # in the middle of an answer: the answer goes on below
            self._write("\n" + self._block(text) + LABEL + indented(self._shown))
            return
        self._write(self._block(text))

    def _block(self, text: str) -> str:
        return LABEL + indented(text) + "\n"

    # -- the waiting indicator ----------------------------------------------------------
    async def _paint(self) -> None:
        frame = 0
        while True:
            if self._shown is None:
                self._write(f"{CLEAR_LINE}{LABEL}{SPINNER[frame % len(SPINNER)]}")
                self._spinning = True
            self._redraw()
            frame += 1
            await asyncio.sleep(FRAME_SECONDS)

    def _redraw(self) -> None:
        """Plain text needs none: it is appended as it comes."""

    def _hide_spinner(self) -> None:
        if self._spinning:
            self._write(CLEAR_LINE)
            self._spinning = False

    def _stop_painting(self) -> None:
        if self._painter is not None:
            self._painter.cancel()
            self._painter = None
        self._hide_spinner()

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()


def indented(text: str) -> str:
    """Continuation lines under the text of `bot> `, not under the label."""
    return text.replace("\n", "\n" + INDENT)


def wants_plain(out: TextIO, environ: Mapping[str, str]) -> bool:
    """Plain text for a pipe or a file, for `NO_COLOR` (no-color.org) and a dumb terminal."""
    return (
        not is_terminal(out)
        or bool(environ.get("NO_COLOR"))
        or environ.get("TERM", "") in ("", "dumb")
    )


def is_terminal(out: TextIO) -> bool:
    with contextlib.suppress(ValueError, AttributeError):
        return out.isatty()
    return False
