"""A document's text cut into pieces LightRAG keeps whole.

LightRAG cuts what it is given into chunks of `CHUNK_SIZE` tokens (1,200 by default) and
retrieval hands back whole chunks. The bot cuts first, well below that, so that each piece
is one chunk on the server, names its document and part, and fits `# Relevant Memory`
(`rag.contextMaxChars`, 4,000 by default) with room for others.
"""

from __future__ import annotations

import re

CHUNK_CHARS = 2000
"""About 500 English tokens (1,000 for denser scripts): under LightRAG's 1,200."""
OVERLAP_CHARS = 200
"""Carried from the end of one piece into the next, so a sentence cut at a boundary is
whole in one of them."""

_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?…])\s+"))


def chunk_text(
    text: str, max_chars: int = CHUNK_CHARS, overlap_chars: int = OVERLAP_CHARS
) -> list[str]:
    """`text` in pieces of at most `max_chars`, cut at a paragraph, line or sentence end
    when one lies in the second half of the piece, else at a space, else anywhere."""
    return [piece for piece, _ in chunks_with_ends(text, max_chars, overlap_chars)]


def chunks_with_ends(
    text: str, max_chars: int = CHUNK_CHARS, overlap_chars: int = OVERLAP_CHARS
) -> list[tuple[str, int]]:
    """`chunk_text`'s pieces, each with where it ends in `text` stripped (how much of a text
    the first pieces cover: a repeating text has no other way to tell)."""
    if overlap_chars >= max_chars // 2:
        raise ValueError("overlap_chars must be under half of max_chars")
    text = text.strip()
    pieces: list[tuple[str, int]] = []
    start = 0
    while start < len(text):
        end = len(text) if len(text) - start <= max_chars else _cut(text, start, max_chars)
        piece = text[start:end].strip()
        if piece:
            pieces.append((piece, end))
        if end >= len(text):
            break
        start = _next_start(text, start, end, overlap_chars)
    return pieces


def _cut(text: str, start: int, max_chars: int) -> int:
    window = text[start : start + max_chars]
    half = max_chars // 2
    for pattern in _BREAKS:
        ends = [m.end() for m in pattern.finditer(window) if m.end() > half]
        if ends:
            return start + ends[-1]
    space = window.rfind(" ", half)
    return start + (space + 1 if space > 0 else max_chars)


def _next_start(text: str, start: int, end: int, overlap_chars: int) -> int:
    """Back up by about `overlap_chars` from `end`, to a word's start; always moves on."""
    if overlap_chars <= 0:
        return end
    back = max(end - overlap_chars, start + 1)
    space = text.find(" ", back, end)
    return space + 1 if space != -1 else back
