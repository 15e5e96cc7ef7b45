"""The background worker that takes documents from the durable queue to LightRAG.

Oldest first, one at a time, with exponential backoff while the server is down; a document
leaves the queue only when the server has it. Started with the app; on shutdown it keeps
sending for a bounded time and leaves the rest on disk for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random

from bot.config import RuntimeConfigStore
from bot.conversation import utc_now
from bot.ports.rag import IndexReceipt, RagPort, RagRejected, RagUnavailable
from bot.rag.documents import RagDocument
from bot.rag.ledger import IndexLedger, LedgerEntry
from bot.rag.queue import IndexQueue, QueuedDocument

log = logging.getLogger("bot.rag")

FIRST_BACKOFF_SECONDS = 1.0
DISABLED_RECHECK_SECONDS = 5.0


class RagIndexer:
    """`IndexQueuePort` for the pipeline, and the worker that empties the queue."""

    def __init__(
        self, queue: IndexQueue, rag: RagPort, ledger: IndexLedger, config: RuntimeConfigStore
    ) -> None:
        self.queue = queue
        self._rag = rag
        self._ledger = ledger
        self._config = config
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.indexed = 0

    async def enqueue(self, document: RagDocument) -> None:
        await self.queue.put(document)
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._run(), name="rag-indexer")

    async def stop(self, drain_seconds: float | None = None) -> None:
        """Send what is queued for up to `drain_seconds`, then stop; the rest stays on disk."""
        if self._task is None:
            return
        if drain_seconds is None:
            drain_seconds = self._config.current().rag.shutdown_drain_seconds
        self._stopping = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), drain_seconds)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.queue.depth:
            log.info("[RagIndexing] %d document(s) stay queued on disk", self.queue.depth)
        self._task = None

    async def _run(self) -> None:
        backoff = 0.0
        while True:
            rag = self._config.current().rag
            item = self.queue.oldest() if rag.enabled else None
            if item is None:
                if self._stopping:
                    return
                await self._sleep(None if rag.enabled else DISABLED_RECHECK_SECONDS)
                continue
            try:
                await self._send(item)
            except RagRejected as exc:
                self.queue.set_aside(item, str(exc))
                continue
            except Exception as exc:
                if not isinstance(exc, RagUnavailable):
                    log.exception("[RagIndexing] Failed to index: %s", exc)
                if self._stopping:
                    return
                backoff = min(max(backoff * 2, FIRST_BACKOFF_SECONDS), rag.index_retry_max_seconds)
                delay = backoff * random.uniform(0.8, 1.2)
                log.info("[RagIndexing] %d waiting; next attempt in %.1fs", self.queue.depth, delay)
                await self._sleep(delay)
                continue
            backoff = 0.0

    async def _send(self, item: QueuedDocument) -> None:
        document = item.document
        receipt = await self._rag.index(document)
        if receipt.duplicate_of and not self._owns(document.owner, receipt.duplicate_of):
            # Another user's exchange read the same: this one must be a document of its own.
            await self._record(document, receipt)  # the refused upload, for deletion
            document = document.distinct()
            receipt = await self._rag.index(document)
        await self._record(document, receipt)
        self.queue.remove(item)
        self.indexed += 1
        log.info("[RagIndexing] Indexed %d chars", len(document.text))

    def _owns(self, owner: str, doc_id: str) -> bool:
        return any(entry.doc_id == doc_id for entry in self._ledger.entries(owner))

    async def _record(self, document: RagDocument, receipt: IndexReceipt) -> None:
        entry = LedgerEntry(
            file_source=document.file_source,
            doc_id=receipt.doc_id,
            track_id=receipt.track_id,
            chat_key=document.chat_key,
            indexed_at=utc_now(),
        )
        await self._ledger.record(document.owner, entry)

    async def _sleep(self, seconds: float | None) -> None:
        """Until a new document arrives, shutdown begins, or `seconds` pass."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()
