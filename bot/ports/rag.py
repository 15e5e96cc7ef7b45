"""Long-term memory (LightRAG) as the bot sees it: the only way the pipeline reaches the server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.rag.documents import RagDocument


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


class IndexQueuePort(Protocol):
    async def enqueue(self, document: RagDocument) -> None:
        """Keep `document` durably for indexing; returns before any network call."""
        ...


class RagPort(Protocol):
    async def query(self, text: str, mode: str, owner: str) -> str:
        """Context from `owner`'s past conversations relevant to `text`; "" when unavailable."""
        ...

    async def index(self, document: RagDocument) -> IndexReceipt:
        """Send one document; raises `RagUnavailable` (retry) or `RagRejected` (drop)."""
        ...

    async def upload_status(self, track_id: str) -> UploadStatus | None:
        """The status of an upload; None while the server has not registered it yet."""
        ...

    def is_available(self) -> bool:
        """Enabled, and not known to be down (circuit closed or ready to probe)."""
        ...

    async def health(self) -> RagHealth:
        """A diagnostic look at the server; not called on the turn's path."""
        ...

    async def delete(self, doc_ids: list[str]) -> None:
        """Delete documents by id; raises `RagUnavailable` when it could not."""
        ...

    async def documents_of(self, owner: str) -> list[StoredDocument]:
        """Every document on the server whose `file_source` names `owner`."""
        ...
