"""A user's LightRAG documents as `/memory` and `/forget all` see them."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from bot.i18n.catalogue import memory as texts
from bot.ports.rag import IndexLedgerStore, IndexQueueStore, RagDocumentStore
from bot.rag.documents import CONVERSATION_PREFIX, named_by_content
from bot.rag.model import RagUnavailable
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

    def __init__(
        self, queue: IndexQueueStore, ledger: IndexLedgerStore, rag: RagDocumentStore
    ) -> None:
        self._queue = queue
        self._ledger = ledger
        self._rag = rag
        self._deleted_on_server: dict[str, int] = {}
        """Per user, how many documents the last `forget_user` deleted on the server."""

    def traces_left(self, user_id: str) -> str | None:
        """LightRAG's LLM cache keeps the summaries its model wrote while indexing (entity
        and relation descriptions merged from several pieces: `cache_type` "summary"). They
        are not tied to a document, so `delete_llm_cache` leaves them, and the server's only
        other way, `POST /documents/clear_cache`, empties every user's cache, whose
        extractions later deletions rebuild the shared entities from. So say so."""
        if not self._deleted_on_server.pop(user_id, 0):
            return None
        log.info(
            "[RAG] /forget all: LightRAG's LLM cache may keep summaries of the deleted "
            "documents; only POST /documents/clear_cache (every user's cache) removes them"
        )
        return texts.lightrag_cache_may_keep()

    async def forget_holding(self, user_id: str, words: str, holds: Callable[[str], bool]) -> int:
        """Delete from the server the user's conversations that hold `words`: those a query
        for them finds whose found text `holds` says holds them (an exchange that said a fact
        being forgotten). A shared document's pieces are left: they go with the document's
        note (`forget_shared_at`), never for holding a fact's words. Returns how many went;
        raises `RagUnavailable` when the server could not be asked or could not delete them.
        Conversations still queued that `holds` accepts go first, with or without the server."""
        queued = await self._queue.forget_where(
            user_id, lambda document: not named_by_content(document) and holds(document.text)
        )
        if not await self._ledger.entries_of(user_id):
            return queued  # nothing of this user on the server: no request at all
        if not self._rag.is_available():
            raise RagUnavailable("LightRAG is off or unreachable")
        found = await self._rag.texts_about(user_id, words)
        sources = {
            text.file_source
            for text in found
            if text.file_source.startswith(CONVERSATION_PREFIX) and holds(text.text)
        }
        return queued + (await self._delete_sources(user_id, sources) if sources else 0)

    async def forget_shared_at(self, user_id: str, prefix: str) -> int:
        """Delete from the server the user's documents whose name begins with `prefix` (the
        pieces of one shared document, `shared_pieces_prefix`), queued or on the server;
        how many went."""
        queued = await self._queue.forget_where(
            user_id, lambda document: document.file_source.startswith(prefix)
        )
        entries = await self._ledger.entries_of(user_id)
        sources = {e.file_source for e in entries if e.file_source.startswith(prefix)}
        if not sources:
            return queued
        if not self._rag.is_available():
            raise RagUnavailable("LightRAG is off or unreachable")
        return queued + await self._delete_sources(user_id, sources)

    async def _delete_sources(self, user_id: str, sources: set[str]) -> int:
        """Delete the documents named `sources` by their ids (from the ledger, else a scan of
        the server's documents), then forget them in the ledger."""
        entries = await self._ledger.entries_of(user_id)
        ids = {e.doc_id for e in entries if e.file_source in sources and e.doc_id}
        known = {e.file_source for e in entries if e.file_source in sources and e.doc_id}
        if sources - known:
            stored = await self._rag.documents_of(user_id)
            ids |= {d.doc_id for d in stored if d.file_source.rsplit("/", 1)[-1] in sources}
        ordered = sorted(ids)
        for start in range(0, len(ordered), DELETE_BATCH):
            batch = ordered[start : start + DELETE_BATCH]
            await DELETE_RETRY.call(functools.partial(self._rag.delete, batch))
        await self._ledger.drop(user_id, sources)
        if ordered:
            self._deleted_on_server[user_id] = len(ordered)
            log.info("[RAG] forgot %d document(s) of one user holding some words", len(ordered))
        return len(ordered)

    async def count_for(self, user_id: str) -> int:
        return len(await self._ledger.entries_of(user_id)) + await self._queue.count_of(user_id)

    async def forget_user(self, user_id: str) -> int:
        """Drop the user's queued documents and delete their indexed ones from the server.

        Ids come from the ledger and from a scan of the server's documents by owner tag, so a
        document whose id was never recorded (a crash right after upload) goes too. Raises
        `RagUnavailable` when the server could not be reached; the ledger is then kept. With
        LightRAG off and nothing recorded, no request is made at all.
        """
        # Queued, set aside for an operator (words all the same), and waiting in memory.
        local = await self._queue.forget_user(user_id)
        entries = await self._ledger.entries_of(user_id)
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
        await self._ledger.forget(user_id)
        self._deleted_on_server[user_id] = len(ordered)
        log.info("[RAG] forgot %d document(s) of one user", len(ids) + local)
        return len(ids) + local
