"""A user's LightRAG documents as `/memory` and `/forget all` see them."""

from __future__ import annotations

import asyncio
import functools
import logging

from bot.ports.rag import RagDocumentStore, RagUnavailable
from bot.rag.ledger import IndexLedger
from bot.rag.queue import IndexQueue
from bot.retry import RetryPolicy

log = logging.getLogger("bot.rag")

DELETE_RETRY = RetryPolicy(
    "[RAG] delete",
    lambda error: isinstance(error, RagUnavailable),  # down, or busy processing documents
    attempts=5,
    first_wait_seconds=1.0,
    max_wait_seconds=4.0,
    jitter=False,
)
"""A deletion a user is waiting on (`/forget all`): tried for about ten seconds."""
DELETE_BATCH = 100


class LongTermDocuments:
    """`UserMemoryStore` over the index ledger, the queue and the server itself."""

    label = "long-term documents (LightRAG)"

    def __init__(self, queue: IndexQueue, ledger: IndexLedger, rag: RagDocumentStore) -> None:
        self._queue = queue
        self._ledger = ledger
        self._rag = rag

    async def count_for(self, user_id: str) -> int:
        refused = await asyncio.to_thread(self._queue.failed_of, user_id)  # rarely any
        return len(self._ledger.entries(user_id)) + self._queue.count_for(user_id) + len(refused)

    async def forget_user(self, user_id: str) -> int:
        """Drop the user's queued documents and delete their indexed ones from the server.

        Ids come from the ledger and from a scan of the server's documents by owner tag, so a
        document whose id was never recorded (a crash right after upload) goes too. Raises
        `RagUnavailable` when the server could not be reached; the ledger is then kept. With
        LightRAG off and nothing recorded, no request is made at all.
        """
        queued = [item for item in self._queue.all() if item.document.owner == user_id]
        for item in queued:
            self._queue.remove(item)
        refused = self._queue.failed_of(user_id)  # set aside for an operator: words all the same
        for path in refused:
            self._queue.delete_failed(path)
        # Queued on disk, set aside, and waiting in memory for room on the disk.
        local = len(queued) + len(refused) + self._queue.forget_unwritten(user_id)
        entries = self._ledger.entries(user_id)
        if not self._rag.is_available():
            if entries:
                raise RagUnavailable("LightRAG is off or unreachable, so indexed documents stay")
            return local
        ids = {e.doc_id for e in entries if e.doc_id}
        ids |= {doc.doc_id for doc in await self._rag.documents_of(user_id)}
        ordered = sorted(ids)
        for start in range(0, len(ordered), DELETE_BATCH):
            batch = ordered[start : start + DELETE_BATCH]
            await DELETE_RETRY.call(functools.partial(self._rag.delete, batch))
        self._ledger.clear(user_id)
        log.info("[RAG] forgot %d document(s) of one user", len(ids) + local)
        return len(ids) + local
