"""Long-term memory's own types: what is indexed, what the server answers, what is queued and
recorded. The ports (`bot/ports/rag.py`) and the stores that keep them (files in `bot/rag/`,
PostgreSQL in `bot/adapters/postgres/`) all import them from here, so none imports another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel


class RagDocument(BaseModel):
    """One exchange to index, as queued on disk and sent to the server; made and named by
    `bot/rag/documents.py` in the product spec's format."""

    owner: str
    chat_key: str
    file_source: str
    text: str
    created_at: datetime


class RagUnavailable(Exception):
    """The server could not take the request now (down, slow, 5xx, circuit open): retry later."""


class RagRejected(Exception):
    """The server refused this request for good (e.g. 409, 413, 422): retrying will not help."""

    def __init__(self, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status


@dataclass(frozen=True)
class IndexReceipt:
    """The server took a document; `track_id` follows its processing."""

    file_source: str
    track_id: str | None
    already_present: bool = False
    """Sent before (a crash came between upload and bookkeeping): nothing more to do."""


@dataclass(frozen=True)
class UploadStatus:
    """What the server made of an upload: its document id (deletion needs it), and the
    document it repeats when it refused the text as already known (LightRAG ids by content)."""

    doc_id: str
    duplicate_of: str | None = None


@dataclass(frozen=True)
class RagHealth:
    healthy: bool
    detail: str


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    file_source: str


@dataclass(frozen=True)
class FoundText:
    """A piece of one of the asking user's documents that a query found, with its source."""

    file_source: str
    text: str


class LedgerEntry(BaseModel):
    """One document a user has on the server, as the index ledger records it."""

    file_source: str
    doc_id: str | None
    track_id: str | None
    chat_key: str
    indexed_at: datetime


@dataclass(frozen=True)
class QueuedDocument:
    """A document in the queue, and where: its file, or (`of`) a database row's key."""

    path: Path
    document: RagDocument

    @classmethod
    def of(cls, key: str, document: RagDocument) -> QueuedDocument:
        return cls(Path(key), document)

    @property
    def key(self) -> str:
        """The file's name, or the row's key."""
        return self.path.name
