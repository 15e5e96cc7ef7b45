"""Markdown as a terminal shows it, through `rich`, keeping the answer's line breaks.

Imported only when the terminal chat starts on a colour terminal, so the Markdown parser
(`markdown-it`) and rich's Markdown costs nothing elsewhere. (httpx imports `rich.console`
for its command-line client whenever rich is installed: about 0.1 s at every start.)
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown

CODE_THEME = "monokai"


def render_markdown(text: str, width: int, color_system: str | None) -> list[str]:
    """`text` rendered for a terminal `width` columns wide: one string (with ANSI styles) per
    screen row, so a caller can count the rows it has drawn."""
    console = Console(
        file=io.StringIO(),
        width=max(width, 20),
        force_terminal=True,
        color_system=color_system,  # type: ignore[arg-type]
        highlight=False,
        emoji=False,
    )
    console.print(_keeping_line_breaks(Markdown(text, code_theme=CODE_THEME, hyperlinks=False)))
    assert isinstance(console.file, io.StringIO)
    rows = console.file.getvalue().split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def _keeping_line_breaks(markdown: Markdown) -> Markdown:
    """Every single line break shown as one, as Telegram shows them: an answer's addresses,
    verses and our command listings are written line by line.

    rich renders Markdown's soft breaks as spaces (CommonMark's reading) and takes no option
    to do otherwise; markdown-it's `breaks` option changes only its HTML renderer, not the
    tokens rich reads. So the soft breaks of the parsed tokens (`Markdown.parsed`) are turned
    into hard ones.
    """
    for token in markdown.parsed:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
    return markdown
