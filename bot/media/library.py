"""Filing a shared document into memory: short-term memory and, when on, long-term memory.

Short-term memory gets one note saying what was shared and when, and the text in small parts
under the note's id (`bot/memory/documents.py`): found by words and meaning after `/new`
with the default config, listed by `/memory`, deleted by `/forget <note id>`. For LightRAG
the text goes, in larger pieces (`bot/media/chunking.py`), through the durable index queue
like any exchange. Both are owned by the memory scope it was shared in: the sender in
private, the group in a group. So retrieval keeps it to that scope and `/forget all` deletes
it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from bot.conversation import MemoryScope
from bot.media.chunking import chunk_text, chunks_with_ends
from bot.media.kinds import FileKind
from bot.memory.documents import (
    MAX_PARTS,
    PART_CHARS,
    PART_OVERLAP_CHARS,
    document_parts,
    note_text,
)
from bot.memory.episodes import attributed
from bot.memory.model import ItemType, MemoryItem, new_item
from bot.ports.memory import DocumentNotes
from bot.ports.rag import IndexQueuePort
from bot.rag.documents import shared_file_piece

log = logging.getLogger(__name__)

NOTE_CONFIDENCE = 0.6
NOTE_KINDS = {
    FileKind.PDF: "a PDF document",
    FileKind.DOCX: "a Word document",
    FileKind.TEXT: "a text file",
    FileKind.MARKDOWN: "a Markdown file",
    FileKind.IMAGE: "an image",
}


class DocumentLibrary:
    """Puts a document's text where the memory of its scope lives."""

    def __init__(self, queue: IndexQueuePort, notes: DocumentNotes | None = None) -> None:
        self._queue = queue
        self._notes = notes

    async def file(
        self,
        scope: MemoryScope,
        chat_key: str,
        file_name: str,
        text: str,
        at: datetime,
    ) -> int:
        """Queue `text` for indexing in pieces, each headed by the file's name and its part;
        returns how many pieces."""
        pieces = chunk_text(text)
        sender = f" by {speaker.name}" if (speaker := scope.speaker) else ""
        for number, piece in enumerate(pieces, start=1):
            header = (
                f'Document "{file_name}", shared{sender} on {at:%Y-%m-%d %H:%M} UTC, '
                f"part {number} of {len(pieces)}:"
            )
            await self._queue.enqueue(shared_file_piece(scope.owner, chat_key, header, piece, at))
        log.info("[Media] filed a document of %d chars in %d piece(s)", len(text), len(pieces))
        return len(pieces)

    async def keep(
        self,
        scope: MemoryScope,
        kind: FileKind,
        at: datetime,
        summary: str,
        source: str,
        text: str | None,
    ) -> KeptDocument | None:
        """The document in short-term memory: one note saying what was shared and when
        (`summary`: "3 pages, 5,210 characters"), a fact kept as long as the document, and,
        given its `text`, the text in parts (`bot/memory/documents.py`) under the note's id.
        `text` None: the note alone (its text is in long-term memory only). None when the
        disk refused the note (the document is filed in long-term memory all the same).
        The file's name stays out: whoever made the file chose it, and a fact holds only
        what the user said or the bot saw itself."""
        if self._notes is None:
            return None
        pieces, kept_chars = await asyncio.to_thread(_pieces, text) if text else ([], 0)
        parts = min(len(pieces), MAX_PARTS)
        item = new_item(
            ItemType.FACT,
            note_text("The user", NOTE_KINDS[kind], summary, at, parts),
            source=source,
            confidence=NOTE_CONFIDENCE,
            now=at,
        )
        if (speaker := scope.speaker) is not None:
            item = attributed(item, speaker)
        try:
            (note,) = await self._notes.add(scope.owner, [item])
            # 500 parts take some 25 ms to make: in a worker thread, as the cutting.
            made = await asyncio.to_thread(document_parts, note.id, pieces, at, NOTE_CONFIDENCE)
            stored = await self._notes.keep_parts(scope.owner, made)
        except OSError as exc:
            log.warning("[Media] could not keep the shared document in memory: %s", exc)
            return None
        if pieces:
            log.info("[Media] kept a document in %d part(s) of short-term memory", stored)
        return KeptDocument(note, stored, kept_chars if len(pieces) > MAX_PARTS else None)


@dataclass(frozen=True)
class KeptDocument:
    """A document as short-term memory keeps it."""

    note: MemoryItem
    """The fact saying what was shared and when; its id is the document's."""
    parts: int
    """Parts of its text stored (none when only long-term memory holds the text)."""
    cut_at: int | None
    """Characters kept when the text had more than `MAX_PARTS` parts, else None."""


def _pieces(text: str) -> tuple[list[str], int]:
    """The text in parts for short-term memory, one more than `MAX_PARTS` at most, and how
    many characters the first `MAX_PARTS` cover (a worker thread's work: a long text takes
    a while to cut)."""
    head = text[: (MAX_PARTS + 1) * PART_CHARS]
    found = chunks_with_ends(head, PART_CHARS, PART_OVERLAP_CHARS)[: MAX_PARTS + 1]
    kept = found[:MAX_PARTS]
    return [piece for piece, _ in found], kept[-1][1] if kept else 0
