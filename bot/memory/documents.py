"""Documents a user shares, kept in their short-term memory: the text in parts, each a
`document` item found by words and by meaning like any other, under the owner's scope.

Works without LightRAG (the default config): "send a PDF, ask about it after /new". A
document is its note (the fact "The user shared a PDF … on …", listed by `/memory`) and its
parts, whose ids are the note's id and a part number, so `/forget <note id>` finds and
deletes them all. Parts are made small enough to be one line of `# Memory`, at most
`MAX_PARTS` per document (the reply says where the text was cut), and stored in batches:
the event loop gets its turn between them, and the parts' vectors are made in the
background like every item's.

What a document says came from outside: in the prompt its parts are fenced as untrusted data
(`bot/untrusted.py`), and a part whose words the prompt already holds (LightRAG's `# Relevant
Memory`, or the document itself in the turn it came with) is left out of `# Memory`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from bot.memory.model import ItemType, Layer, MemoryItem, fingerprint, new_item, shorten
from bot.untrusted import fenced

PART_CHARS = 420
"""Characters of one part: with its label, one line of `# Memory` (`MAX_ITEM_CHARS`, 480)."""
PART_OVERLAP_CHARS = 60
"""Carried from one part into the next, so that a sentence cut at a boundary is whole once."""
MAX_PARTS = 500
"""Parts of one document at most (about 180,000 characters); the rest is not kept here, and
the reply says so. A user's items are all indexed in memory: a bound per document keeps one
upload from costing a user's memory more than a long life of conversation does."""
BATCH = 32
"""Parts stored per write: the event loop serves other chats between two batches."""
PART_ID_DIGITS = 4
"""Hex digits of the part number after the note's id (ids fit the vectors' 16 bytes)."""
LABEL = "- [document "
"""How a part's line in `# Memory` begins (`prompt_line`)."""
REPEAT_WORDS = 8
"""A part sharing a run of this many words with what the prompt already holds is a repeat."""

_WORD = re.compile(r"\w+")


def part_id(document_id: str, number: int) -> str:
    """The id of part `number` (from 1) of the document whose note has `document_id`."""
    return f"{document_id}{number:0{PART_ID_DIGITS}x}"


def is_part_of(item: MemoryItem, document_id: str) -> bool:
    """Whether `item` is a part of the document whose note has `document_id`."""
    return (
        item.layer is Layer.DOCUMENT
        and len(item.id) == len(document_id) + PART_ID_DIGITS
        and item.id.startswith(document_id)
    )


def note_text(subject: str, kind: str, summary: str, at: datetime, parts: int) -> str:
    """The note of a shared document: what, when, and where its text is. `subject`: "The
    user", or a group member's name."""
    where = (
        f"its text is in memory, in {parts:,} part{'s' if parts != 1 else ''}"
        if parts
        else "its text is in long-term memory"
    )
    return f"{subject} shared {kind} ({summary}) on {at:%Y-%m-%d %H:%M} UTC; {where}."


def document_parts(
    document_id: str, pieces: list[str], at: datetime, confidence: float
) -> list[MemoryItem]:
    """`pieces` (at most `MAX_PARTS` of them) as the document's parts, ready to store."""
    total = min(len(pieces), MAX_PARTS)
    parts: list[MemoryItem] = []
    for number, piece in enumerate(pieces[:total], start=1):
        item = new_item(
            ItemType.DOCUMENT,
            piece,
            title=f"Part {number} of {total}",
            source=f"document:{document_id}",
            confidence=confidence,
            now=at,
        )
        parts.append(
            item.model_copy(
                update={
                    "id": part_id(document_id, number),
                    # Two documents holding the same words are still two documents.
                    "fingerprint": fingerprint(ItemType.DOCUMENT, "", f"{document_id}:{number}"),
                }
            )
        )
    return parts


def batches(parts: list[MemoryItem]) -> Iterable[list[MemoryItem]]:
    """`parts` in writes of `BATCH`."""
    for start in range(0, len(parts), BATCH):
        yield parts[start : start + BATCH]


def prompt_line(item: MemoryItem, max_chars: int) -> str:
    """`- [document part 2 of 12 #ab12cd34ef0002] the text`: a part's line of `# Memory`."""
    head = f"{LABEL}{item.title[:1].lower()}{item.title[1:]} #{item.id}] "
    return head + shorten(item.content, max(max_chars - len(head), 16))


def holds_document_parts(pack: str) -> bool:
    """Whether `pack` (`MemoryPack.text()`) holds a part of a shared document."""
    return any(line.startswith(LABEL) for line in pack.splitlines())


def memory_section(pack: str, in_prompt_already: str = "") -> str:
    """The `# Memory` section's text for `pack` (`MemoryPack.text()`): the items as they
    are, then the documents' parts fenced as untrusted data, without those whose words
    `in_prompt_already` holds (LightRAG's context, a document shared this turn)."""
    own = [line for line in pack.splitlines() if not line.startswith(LABEL)]
    parts = [line for line in pack.splitlines() if line.startswith(LABEL)]
    if in_prompt_already and parts:
        seen = _runs(in_prompt_already)
        parts = [line for line in parts if not _runs(line.split("] ", 1)[-1]) & seen]
    if parts:
        own.append("From documents the user shared:")
        own.append(fenced("document", "\n".join(parts)))
    return "\n".join(own)


def _runs(text: str) -> set[tuple[str, ...]]:
    """Every run of `REPEAT_WORDS` words of `text`, lowercased (a shorter text: itself)."""
    words = [word.lower() for word in _WORD.findall(text)]
    if len(words) < REPEAT_WORDS:
        return {tuple(words)} if words else set()
    return {tuple(words[at : at + REPEAT_WORDS]) for at in range(len(words) - REPEAT_WORDS + 1)}
