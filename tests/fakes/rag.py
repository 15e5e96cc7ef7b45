"""LightRAG in memory, for unit tests: every port of `bot/ports/rag.py`, recording its calls."""

from __future__ import annotations

from bot.config import RuntimeConfig
from bot.rag.model import (
    FoundText,
    IndexReceipt,
    RagDocument,
    RagHealth,
    RagRejected,
    RagUnavailable,
    StoredDocument,
    UploadStatus,
)


class FakeRag:
    """Answers every query with `context`; fails while `down`; refuses texts containing
    'REJECT'; ids documents by their text, as LightRAG does; remembers what it got."""

    def __init__(self, context: str = "") -> None:
        self.context = context
        self.asked: list[tuple[str, str, str]] = []
        """(text, owner, query mode) of every query."""
        self.down = False
        self.received: list[RagDocument] = []
        self.deleted: list[list[str]] = []
        self.on_server: list[StoredDocument] = []
        self.busy_deletes = 0
        self.uploads: dict[str, UploadStatus] = {}
        self.attempts = 0
        self.about: list[FoundText] = []
        """What `texts_about` finds, whatever it is asked."""

    async def query(self, text: str, owner: str, config: RuntimeConfig) -> str:
        self.asked.append((text, owner, config.rag.query_mode))
        return self.context

    async def index(self, document: RagDocument) -> IndexReceipt:
        self.attempts += 1
        if self.down:
            raise RagUnavailable("Connection refused")
        if "REJECT" in document.text:
            raise RagRejected("HTTP 422: empty", http_status=422)
        track = f"track-{len(self.uploads)}"
        # Like LightRAG: a text already stored is refused, naming the document it repeats.
        for number, earlier in enumerate(self.received, 1):
            if earlier.text == document.text:
                self.uploads[track] = UploadStatus("dup-x", duplicate_of=f"doc-{number}")
                return IndexReceipt(document.file_source, track)
        self.received.append(document)
        self.uploads[track] = UploadStatus(f"doc-{len(self.received)}")
        return IndexReceipt(document.file_source, track)

    async def upload_status(self, track_id: str) -> UploadStatus | None:
        return self.uploads.get(track_id)

    def is_available(self) -> bool:
        return not self.down

    async def documents_of(self, owner: str) -> list[StoredDocument]:
        return list(self.on_server)

    async def delete(self, doc_ids: list[str]) -> None:
        if self.busy_deletes:
            self.busy_deletes -= 1
            raise RagUnavailable("busy")
        self.deleted.append(doc_ids)

    async def texts_about(self, owner: str, text: str) -> list[FoundText]:
        if self.down:
            raise RagUnavailable("Connection refused")
        return list(self.about)

    async def health(self) -> RagHealth:
        return RagHealth(not self.down, "down" if self.down else "healthy at here")


class RecordingQueue:
    """`IndexQueuePort`: keeps what the pipeline queued for indexing."""

    def __init__(self) -> None:
        self.documents: list[RagDocument] = []

    async def enqueue(self, document: RagDocument) -> None:
        self.documents.append(document)
