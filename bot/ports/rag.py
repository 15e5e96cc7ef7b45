"""Long-term memory (LightRAG) as the bot sees it: the only way anything reaches the server.

One narrow protocol per consumer, so each depends only on what it calls: context building
recalls (`RagRecall`), the pipeline queues (`IndexQueuePort`), the index worker uploads
(`RagUploads`), `/forget all` finds and deletes a user's documents (`RagDocumentStore`), and
`/status` looks at the server (`RagHealthCheck`). `LightRagAdapter` implements all of the
server's; `RagIndexer` is the queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from bot.config import RuntimeConfig
from bot.rag.model import (
    FoundText,
    IndexReceipt,
    LedgerEntry,
    QueuedDocument,
    RagDocument,
    RagHealth,
    StoredDocument,
    UploadStatus,
)


class RagRecall(Protocol):
    """Context building: what the asking scope said before, for this turn's prompt."""

    async def query(self, text: str, owner: str, config: RuntimeConfig) -> str:
        """Context from `owner`'s past conversations relevant to `text`; "" when unavailable.

        `config` is the turn's snapshot: its `rag` section (mode, style, budget, server) and
        who may talk to the bot decide the whole query, whatever the file says by now."""
        ...


class IndexQueuePort(Protocol):
    """The pipeline: hand an exchange over for indexing."""

    async def enqueue(self, document: RagDocument) -> None:
        """Keep `document` durably for indexing; returns before any network call."""
        ...


class RagUploads(Protocol):
    """The index worker: send documents and learn what the server made of them."""

    async def index(self, document: RagDocument) -> IndexReceipt:
        """Send one document; raises `RagUnavailable` (retry) or `RagRejected` (drop)."""
        ...

    async def upload_status(self, track_id: str) -> UploadStatus | None:
        """The status of an upload; None while the server has not registered it yet."""
        ...


class RagDocumentStore(Protocol):
    """`/forget all` and `/memory`: a user's documents on the server."""

    def is_available(self) -> bool:
        """Enabled, and not known to be down (circuit closed or ready to probe)."""
        ...

    async def documents_of(self, owner: str) -> list[StoredDocument]:
        """Every document on the server whose `file_source` names `owner`."""
        ...

    async def delete(self, doc_ids: list[str]) -> None:
        """Delete documents by id; raises `RagUnavailable` when it could not."""
        ...

    async def texts_about(self, owner: str, text: str) -> list[FoundText]:
        """The pieces of `owner`'s documents a query for `text` finds, as recall would find
        them; raises `RagUnavailable` when the server could not be asked."""
        ...


class RagHealthCheck(Protocol):
    """`/status`: how the server is doing."""

    async def health(self) -> RagHealth:
        """A diagnostic look at the server; not called on the turn's path."""
        ...


class IndexQueueStore(Protocol):
    """Where documents wait for LightRAG: files, or PostgreSQL (`DATABASE_URL`). Durable: a
    document leaves only once the server has it (`done`) or refused it for good (`refuse`)."""

    poll_seconds: float | None
    """How often an idle worker looks for documents other processes added (None: never)."""
    on_written: Callable[[], None] | None
    """Called when documents kept in memory (the store refused them) reach the store."""

    @property
    def depth(self) -> int:
        """Documents waiting, as last seen (cheap: metrics and `/status` read it)."""
        ...

    async def put(self, document: RagDocument) -> None: ...

    async def claim(self) -> QueuedDocument | None:
        """The oldest document no other worker holds, now held by this one; None when none."""
        ...

    async def done(self, item: QueuedDocument) -> None: ...

    async def release(self, item: QueuedDocument) -> None:
        """Not sent this time (the server is down): first in line again, for any worker."""
        ...

    async def refuse(self, item: QueuedDocument, reason: str) -> None:
        """Set aside for an operator: the server refused it for good."""
        ...

    def failed_count(self) -> int:
        """Documents set aside, as last seen."""
        ...

    async def count_of(self, owner: str) -> int: ...

    async def forget_user(self, owner: str) -> int:
        """Drop every document of `owner`, set-aside ones too; returns how many went."""
        ...

    async def forget_where(self, owner: str, wanted: Callable[[RagDocument], bool]) -> int:
        """Drop the documents of `owner` that `wanted` accepts; how many went."""
        ...


class IndexLedgerStore(Protocol):
    """Which documents each user has on the LightRAG server: files, or PostgreSQL."""

    async def record(self, owner: str, entry: LedgerEntry) -> None:
        """Keep `entry`; a later one of the same `file_source` replaces it in place."""
        ...

    async def entries_of(self, owner: str) -> list[LedgerEntry]:
        """The owner's documents, each as last recorded, in the order first recorded."""
        ...

    async def holds(self, owner: str, file_source: str) -> bool:
        """Whether `file_source` of `owner` was recorded (the server took it)."""
        ...

    async def held(self, owner: str, file_sources: set[str]) -> set[str]:
        """Those of `file_sources` recorded for `owner` and not dropped since."""
        ...

    async def forget(self, owner: str) -> None: ...

    async def drop(self, owner: str, file_sources: set[str]) -> None:
        """Forget these documents of `owner` (deleted on the server one by one)."""
        ...

    def owner_count(self) -> int:
        """How many users have documents on the server (cheap: no I/O)."""
        ...
