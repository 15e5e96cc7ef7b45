"""Reading text the bot fenced as untrusted (`bot/untrusted.py`) in tests."""

from __future__ import annotations

import re

_FENCE = re.compile(
    r"\[untrusted (?P<kind>[a-z ]+) (?P<id>[0-9a-f]{16})\]\n(?P<body>.*?)\n"
    r"\[end of untrusted (?P=kind) (?P=id)\]",
    re.DOTALL,
)


def unfenced(text: str) -> str:
    """`text` with each fence replaced by its body; fails on a fence whose ends differ."""
    return _FENCE.sub(lambda m: m["body"], text)


def fences(text: str) -> list[tuple[str, str]]:
    """Each fence in `text`: its kind and its body."""
    return [(m["kind"], m["body"]) for m in _FENCE.finditer(text)]
