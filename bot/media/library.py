"""Filing a shared document into long-term memory, and noting it in short-term memory.

The text goes, in pieces (`bot/media/chunking.py`), through the durable index queue like any
exchange, owned by the memory scope it was shared in: the sender in private, the group in a
group. So retrieval keeps it to that scope, the ledger records it and `/forget all` deletes
it. Short-term memory gets one line saying what was shared and when.
"""

from __future__ import annotations

import logging
from datetime import datetime

from bot.conversation import MemoryScope
from bot.media.chunking import chunk_text
from bot.media.kinds import FileKind
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

    async def note(
        self, scope: MemoryScope, kind: FileKind, at: datetime, summary: str, source: str
    ) -> MemoryItem | None:
        """One line in short-term memory: what was shared and when (`summary`: "3 pages,
        5,210 characters"), a fact kept as long as the document. None when the disk refused
        it (the document is filed all the same). The file's name stays out: whoever made the
        file chose it, and a fact holds only what the user said or the bot saw itself."""
        if self._notes is None:
            return None
        item = new_item(
            ItemType.FACT,
            f"The user shared {NOTE_KINDS[kind]} ({summary}) on {at:%Y-%m-%d %H:%M} UTC; "
            "its text is in long-term memory.",
            source=source,
            confidence=NOTE_CONFIDENCE,
            now=at,
        )
        if (speaker := scope.speaker) is not None:
            item = attributed(item, speaker)
        try:
            stored = await self._notes.add(scope.owner, [item])
        except OSError as exc:
            log.warning("[Media] could not note the shared document: %s", exc)
            return None
        return stored[0] if stored else None
