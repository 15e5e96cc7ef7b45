"""The terminal chat on a colour terminal: replies rendered as Markdown, the answer redrawn as
it grows. Imported only then (`channel.screen_for`), with the Markdown parser behind it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console

from bot.adapters.terminal.markdown import render_markdown
from bot.adapters.terminal.screen import CLEAR_LINE, INDENT, LABEL, PROMPT, Screen

ERASE_BELOW = "\x1b[J"
BUSY_SHARE = 0.2
"""At most this share of the time goes to redrawing an answer as it grows: each redraw
renders all of it so far (about 15 ms for 1,600 characters on a busy machine)."""


class MarkdownScreen(Screen):
    """Markdown is only known once it is written (a code fence, a list): the answer's last
    rows, as many as the screen holds, are redrawn on each frame; rows above them, which a
    terminal cannot redraw once scrolled away, are left as they were drawn."""

    def __init__(
        self,
        out: TextIO,
        typed: Callable[[], str],
        size: Callable[[], os.terminal_size],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`size`: the terminal's, read at each draw; `clock` paces the redraws."""
        super().__init__(out, True, typed)
        self._size = size
        self._clock = clock
        self._colors = Console(file=out).color_system
        self._drawn: str | None = None
        """The text of the answer as the screen shows it; `_shown` may be ahead of it."""
        self._frozen = 0
        """Rows of the answer's rendering above the tail, never redrawn."""
        self._tail = 0
        """Rows of the tail on the screen; the cursor is on the row below them."""
        self._rest_until = 0.0
        """No redraw of a growing answer before this (monotonic): see `BUSY_SHARE`."""

    def show_answer(self, text: str) -> None:
        if self._drawn is not None and not text.startswith(self._drawn):
            self._end_block()  # a new answer after a tool call: the last one stays above
        self._shown = text
        if self._painter is None:
            self._redraw()

    def finish_answer(self, text: str) -> None:
        self._stop_painting()
        if self._drawn is not None and not text.startswith(self._drawn):
            self._end_block()
        self._draw(text, final=True)
        self._reset()

    def settle(self) -> None:
        self._stop_painting()
        self._end_block()

    def message(self, text: str) -> None:
        rows = "".join(row + "\n" for row in self._rows(text))
        if self.at_prompt:
            self._write(CLEAR_LINE + rows + PROMPT + self._typed())
            return
        self._hide_spinner()
        if self._drawn is None:
            self._write(rows)
            return
        self._write(self._erase() + rows)  # the tail of the answer goes on below it
        self._tail = 0
        self._draw(self._drawn, final=False)

    def _redraw(self) -> None:
        if self._shown is None or self._shown == self._drawn:
            return
        started = self._clock()
        if started < self._rest_until:
            return
        self._draw(self._shown, final=False)
        took = self._clock() - started
        self._rest_until = started + took / BUSY_SHARE

    def _draw(self, text: str, final: bool) -> None:
        rows = self._rows(text)
        room = max(self._size().lines - 2, 3)
        tail_from = len(rows) if final else max(self._frozen, len(rows) - room)
        self._hide_spinner()
        self._write(self._erase() + "".join(row + "\n" for row in rows[self._frozen :]))
        self._tail = max(len(rows) - tail_from, 0)
        self._frozen = tail_from
        self._drawn = text

    def _end_block(self) -> None:
        if self._drawn is not None:
            self._draw(self._drawn, final=True)
        self._reset()

    def _reset(self) -> None:
        self._shown = self._drawn = None
        self._frozen = self._tail = 0
        self._rest_until = 0.0

    def _erase(self) -> str:
        return f"\x1b[{self._tail}F{ERASE_BELOW}" if self._tail else CLEAR_LINE

    def _rows(self, text: str) -> list[str]:
        width = self._size().columns - len(LABEL) - 1
        rows = render_markdown(text, width, self._colors) or [""]
        label = f"\x1b[2m{LABEL}\x1b[0m"
        return [(label if i == 0 else INDENT) + row for i, row in enumerate(rows)]
