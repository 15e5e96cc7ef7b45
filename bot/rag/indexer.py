"""The background worker that takes documents from the durable queue to LightRAG.

Oldest first, one at a time, with exponential backoff (`bot/retry.py`'s `Backoff`) while the
server is down; a document leaves the queue only when the server has it, and one the ledger
says the server already has (a document's piece filed again when a message is replayed after
a crash) is not sent again. The backoff grows with failed attempts only: a new message during
an outage waits its turn on disk rather than prompting another attempt, and any call that
reaches LightRAG again (a user's query, say) ends the wait at once. Started with the app; on
shutdown it keeps sending for a bounded time and leaves the rest on disk for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.config import RuntimeConfigStore
from bot.conversation import utc_now
from bot.ports.rag import IndexLedgerStore, IndexQueueStore, RagUploads
from bot.rag.documents import distinct, named_by_content
from bot.rag.model import LedgerEntry, QueuedDocument, RagDocument, RagRejected, RagUnavailable
from bot.retry import Backoff

log = logging.getLogger("bot.rag")

FIRST_BACKOFF_SECONDS = 1.0
DISABLED_RECHECK_SECONDS = 5.0
SETTLE_PAUSES = (0.05, 0.1, 0.2, 0.5, 1, 2, 4, 8, 15)
"""Waits between looks at an upload's status (about 30 s in all) before giving up on it."""
SETTLE_AT_ONCE = 4
SETTLE_DISABLED_RECHECK_SECONDS = 1.0
"""While RAG is off, how often a waiting settle looks whether it is back on (or shutdown began)."""


class RagIndexer:
    """`IndexQueuePort` for the pipeline, and the worker that empties the queue."""

    def __init__(
        self,
        queue: IndexQueueStore,
        rag: RagUploads,
        ledger: IndexLedgerStore,
        config: RuntimeConfigStore,
        back: asyncio.Event | None = None,
    ) -> None:
        """`back`: set when LightRAG answers again (the circuit breaker's `on_recovery`)."""
        self.queue = queue
        self._rag = rag
        self._ledger = ledger
        self._config = config
        self._wake = asyncio.Event()
        """A new document, or shutdown: the idle worker looks at the queue."""
        self._back = back or asyncio.Event()
        """LightRAG answers again, or shutdown: a backing-off worker tries at once."""
        # Documents the disk (or the database) refused at first are in the queue now.
        queue.on_written = self._wake.set
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._settling: set[asyncio.Task[None]] = set()
        self._settle_slots = asyncio.Semaphore(SETTLE_AT_ONCE)

    async def enqueue(self, document: RagDocument) -> None:
        await self.queue.put(document)
        self._wake.set()

    def server_is_back(self) -> None:
        """LightRAG answered a call after failures (the circuit breaker's `on_recovery`)."""
        self._back.set()

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
        self._back.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), drain_seconds)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self._settling):  # ids are found later by owner tag anyway
            task.cancel()
        if self.queue.depth:
            log.info("[RagIndexing] %d document(s) stay queued on disk", self.queue.depth)
        self._task = None

    async def _run(self) -> None:
        failures = 0
        while True:
            rag = self._config.current().rag
            item: QueuedDocument | None = None
            try:
                item = await self.queue.claim() if rag.enabled else None
                if item is None:
                    if self._stopping and not self._settling:
                        return
                    if self._stopping:  # a settle may yet queue a document: look again soon
                        await self._sleep(0.1)
                    else:
                        idle = self.queue.poll_seconds  # other processes' documents
                        await self._sleep(idle if rag.enabled else DISABLED_RECHECK_SECONDS)
                    continue
                await self._send(item)
            except RagRejected as exc:
                if item is not None:
                    await self._refuse(item, str(exc))
                continue
            except Exception as exc:
                if item is None:  # the queue's database is away (it logs that itself)
                    log.debug("[RagIndexing] the queue could not be read: %s", exc)
                elif not isinstance(exc, RagUnavailable):
                    log.exception("[RagIndexing] Failed to index: %s", exc)
                if item is not None:
                    await self._release(item)
                if self._stopping:
                    return
                failures += 1
                backoff = Backoff(FIRST_BACKOFF_SECONDS, rag.index_retry_max_seconds, jitter=0.2)
                delay = backoff.after(failures)
                log.info("[RagIndexing] %d waiting; next attempt in %.1fs", self.queue.depth, delay)
                await self._back_off(delay)
                continue
            failures = 0

    async def _send(self, item: QueuedDocument) -> None:
        """Upload one document; what the server made of it is settled in the background, so
        a busy server, slow to register uploads, never holds up the queue."""
        document = item.document
        if named_by_content(document) and await self._ledger.holds(
            document.owner, document.file_source
        ):
            await self.queue.done(item)
            log.info("[RagIndexing] %s was sent before; not again", document.file_source)
            return
        receipt = await self._rag.index(document)
        await self._record(document, receipt.track_id, doc_id=None)
        await self.queue.done(item)
        log.info("[RagIndexing] Indexed %d chars", len(document.text))
        if receipt.track_id and not receipt.already_present:
            task = asyncio.create_task(self._settle(document, receipt.track_id))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    async def _settle(self, document: RagDocument, track_id: str) -> None:
        """Record the server's id for the upload; when it refused the text as a copy of
        another user's document, queue the exchange again as a document of its own."""
        async with self._settle_slots:
            for pause in SETTLE_PAUSES:
                if not await self._wait_while_disabled():
                    return  # shutting down: still found for deletion later by its owner tag
                try:
                    status = await self._rag.upload_status(track_id)
                except (RagUnavailable, RagRejected):
                    status = None
                if status is not None:
                    break
                await asyncio.sleep(pause)
            else:
                return  # still found for deletion later by its owner tag
        await self._record(document, track_id, status.doc_id)
        if status.duplicate_of and not await self._owns(document.owner, status.duplicate_of):
            await self.enqueue(distinct(document))

    async def _wait_while_disabled(self) -> bool:
        """Hold a settle while `rag.enabled` is false: an operator who turns RAG off expects
        no request of any kind to reach LightRAG. False when shutdown begins meanwhile."""
        while not self._config.current().rag.enabled:
            if self._stopping:
                return False
            await asyncio.sleep(SETTLE_DISABLED_RECHECK_SECONDS)
        return True

    async def _owns(self, owner: str, doc_id: str) -> bool:
        return any(entry.doc_id == doc_id for entry in await self._ledger.entries_of(owner))

    async def _refuse(self, item: QueuedDocument, reason: str) -> None:
        try:
            await self.queue.refuse(item, reason)
        except Exception as exc:  # the database is away: the document is sent again later
            log.warning("[RagIndexing] could not set a refused document aside: %s", exc)

    async def _release(self, item: QueuedDocument) -> None:
        try:
            await self.queue.release(item)
        except Exception as exc:  # a database claim also ends on its own (its lease)
            log.warning("[RagIndexing] could not put a document back in line: %s", exc)

    async def _record(
        self, document: RagDocument, track_id: str | None, doc_id: str | None
    ) -> None:
        entry = LedgerEntry(
            file_source=document.file_source,
            doc_id=doc_id,
            track_id=track_id,
            chat_key=document.chat_key,
            indexed_at=utc_now(),
        )
        await self._ledger.record(document.owner, entry)

    async def _back_off(self, seconds: float) -> None:
        """Until LightRAG is seen answering again, shutdown begins, or `seconds` pass; a new
        document does not end it (it would only fail again, and double the next wait)."""
        self._back.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._back.wait(), seconds)
        self._back.clear()

    async def _sleep(self, seconds: float | None) -> None:
        """Until a new document arrives, shutdown begins, or `seconds` pass."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()
