"""Long answers cut into Telegram-sized parts, each valid on its own and nothing lost.

Telegram counts a message's length, and its entities' offsets, in UTF-16 code units: an emoji
outside the Basic Multilingual Plane counts two. A cut is chosen, best first, at a paragraph
break outside code, a line break outside code, a line break inside a code block (the block is
continued in the next part), a space, and only then anywhere that splits no character or
emoji sequence. Entities that cross a cut are clipped into both parts, so a code block split in
two is two valid code blocks.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from telegramify_markdown import MessageEntity

TELEGRAM_TEXT_LIMIT = 4096
"""Longest text of one message, in UTF-16 code units."""

_CODE_ENTITIES = frozenset({"pre", "code"})
_ZERO_WIDTH_JOINER = "\u200d"
_RANKS = 4  # paragraph, line, line inside code, space


@dataclass(frozen=True)
class MessagePart:
    """The text of one Telegram message and its entities (offsets in UTF-16 code units)."""

    text: str
    entities: tuple[MessageEntity, ...] = field(default=())


def utf16_offsets(text: str) -> list[int]:
    """`offsets[i]` is the UTF-16 offset of `text[i]`; the last item is the total length."""
    offsets = [0] * (len(text) + 1)
    total = 0
    for i, char in enumerate(text):
        offsets[i] = total
        total += 2 if ord(char) > 0xFFFF else 1
    offsets[len(text)] = total
    return offsets


def split_message(
    text: str, entities: Sequence[MessageEntity], limit: int = TELEGRAM_TEXT_LIMIT
) -> list[MessagePart]:
    """`text` with `entities` as parts of at most `limit` UTF-16 units; blank parts are dropped."""
    offsets = utf16_offsets(text)
    cuts = _CutPoints(text, offsets, entities)
    parts: list[MessagePart] = []
    start = _skip_newlines(text, 0)
    while start < len(text):
        if offsets[-1] - offsets[start] <= limit:
            end = len(text)
        else:
            furthest = bisect_right(offsets, offsets[start] + limit) - 1
            end = cuts.best(start, furthest)
        part = _slice(text, offsets, entities, start, end)
        if part is not None:
            parts.append(part)
        start = _skip_newlines(text, end)
    return parts


class _CutPoints:
    """Where a part may end, by preference rank, as sorted lists of string indices."""

    def __init__(self, text: str, offsets: list[int], entities: Sequence[MessageEntity]) -> None:
        self._text = text
        code = _merged(
            (e.offset, e.offset + e.length) for e in entities if e.type in _CODE_ENTITIES
        )
        self._by_rank: list[list[int]] = [[] for _ in range(_RANKS)]
        for i, char in enumerate(text):
            cut = i + 1
            if char == "\n":
                inside_code = _inside(code, offsets[cut])
                if inside_code:
                    self._by_rank[2].append(cut)
                elif i > 0 and text[i - 1] == "\n":
                    self._by_rank[0].append(cut)
                else:
                    self._by_rank[1].append(cut)
            elif char == " ":
                self._by_rank[3].append(cut)

    def best(self, start: int, furthest: int) -> int:
        """The preferred cut in (start, furthest]: best rank in the second half, else anywhere."""
        middle = start + (furthest - start) // 2
        for low in (middle, start):
            for candidates in self._by_rank:
                cut = _last_in(candidates, low, furthest)
                if cut is not None:
                    return cut
        return self._safe_hard_cut(start, furthest)

    def _safe_hard_cut(self, start: int, furthest: int) -> int:
        """A cut that splits no emoji sequence or combining mark, if one fits at all."""
        cut = furthest
        while cut > start + 1 and _joins_previous(self._text, cut):
            cut -= 1
        return cut if cut > start else furthest


def _merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping ranges joined, sorted: a quick lookup of "is this offset inside code"."""
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(ranges):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    return merged


def _inside(ranges: list[tuple[int, int]], offset: int) -> bool:
    """Whether `offset` falls strictly inside one of the disjoint, sorted `ranges`."""
    index = bisect_left(ranges, (offset,)) - 1
    return index >= 0 and offset < ranges[index][1]


def _last_in(candidates: list[int], low: int, high: int) -> int | None:
    index = bisect_right(candidates, high) - 1
    if index >= 0 and candidates[index] > low:
        return candidates[index]
    return None


def _joins_previous(text: str, cut: int) -> bool:
    """Whether `text[cut]` belongs to the character or emoji sequence before it."""
    if cut >= len(text):
        return False
    char, before = text[cut], text[cut - 1]
    if before == _ZERO_WIDTH_JOINER or char == _ZERO_WIDTH_JOINER:
        return True
    if "\ufe00" <= char <= "\ufe0f" or "\U0001f3fb" <= char <= "\U0001f3ff":
        return True  # variation selectors, skin tones
    return unicodedata.combining(char) != 0


def _skip_newlines(text: str, index: int) -> int:
    while index < len(text) and text[index] == "\n":
        index += 1
    return index


def _slice(
    text: str, offsets: list[int], entities: Sequence[MessageEntity], start: int, end: int
) -> MessagePart | None:
    """`text[start:end]` without trailing whitespace, with the entities clipped to it."""
    while end > start and text[end - 1] in " \t\n":
        end -= 1
    chunk = text[start:end]
    if not chunk.strip():
        return None
    low, high = offsets[start], offsets[end]
    clipped = []
    for entity in entities:
        begin = max(entity.offset, low)
        finish = min(entity.offset + entity.length, high)
        if finish > begin:
            clipped.append(entity.copy_with(offset=begin - low, length=finish - begin))
    return MessagePart(chunk, tuple(clipped))
