"""A terminal screen with its scrollback, for the few codes the terminal chat writes: `\\r`,
`\\n`, erase line (`ESC[K`), cursor up to a line's start (`ESC[nF`), erase below (`ESC[J`);
colours are dropped. What a person would see and scroll back through, as text."""

from __future__ import annotations

import re

TOKENS = re.compile(r"\x1b\[([\d;]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


class FakeTerminal:
    """`write` what a program prints; `text()` is the scrollback and the screen, row by row."""

    def __init__(self, rows: int) -> None:
        self._height = rows
        self._rows: list[str] = [""]
        self._top = 0
        self._row = 0
        self._col = 0

    def write(self, data: str) -> int:
        for match in TOKENS.finditer(data):
            token = match.group(0)
            if token == "\r":
                self._col = 0
            elif token == "\n":
                self._newline()
            elif match.group(2) is not None:
                self._code(match.group(1), match.group(2))
            else:
                self._put(token)
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    def text(self) -> str:
        return "\n".join(row.rstrip() for row in self._rows).rstrip("\n")

    def _newline(self) -> None:  # as a terminal with ONLCR shows it: the next row's start
        self._row, self._col = self._row + 1, 0
        if self._row == len(self._rows):
            self._rows.append("")
        if self._row >= self._top + self._height:
            self._top += 1

    def _code(self, parameters: str, letter: str) -> None:
        count = int(parameters) if parameters.isdigit() else 1
        if letter == "K":
            self._rows[self._row] = self._rows[self._row][: self._col]
        elif letter == "F":  # never above the top of the screen: scrollback is out of reach
            self._row, self._col = max(self._top, self._row - count), 0
        elif letter == "J":
            self._rows[self._row] = self._rows[self._row][: self._col]
            del self._rows[self._row + 1 :]

    def _put(self, text: str) -> None:
        row = self._rows[self._row].ljust(self._col)
        self._rows[self._row] = row[: self._col] + text + row[self._col + len(text) :]
        self._col += len(text)
