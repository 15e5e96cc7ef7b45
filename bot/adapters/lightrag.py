"""The long-term memory ports (`bot/ports/rag.py`) over LightRAG's REST API (observed on
lightrag-hku 1.5.7).

A query follows the turn's config snapshot (`TurnContext.config`), so one turn sees one `rag`
section; the calls made outside a turn (uploads, deletes, health) read the runtime config as
it is then. Either way an edit applies on the next call. Every call passes a circuit breaker
and is bounded in time and size (`lightrag_http.py`); a failure never raises out of `query`:
it yields no context and one warning line in the spec's format. A turn waits for its query
at most `rag.recallBudgetSeconds`; a slower query goes on in the background until its
deadline, so the circuit breaker still learns how the server is doing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from bot.adapters.lightrag_http import (
    MAX_ANSWER_BYTES,
    AnswerTooLarge,
    CallFailed,
    LightRagHttp,
    describe_error,
    log_failure,
    megabytes,
)
from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.conversation.scope import GROUP_PREFIX
from bot.rag.circuit import CircuitBreaker, CircuitState
from bot.rag.context import QueryData, render_context
from bot.rag.documents import owner_tag_of, tag
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
from bot.rag.style import answer_style_refusal, effective_style, refusal_notice
from bot.words import content_words

log = logging.getLogger("bot.rag")

MIN_QUERY_WEIGHT = 3  # the server refuses shorter queries with 422
MAX_QUERY_CHARS = 4000  # the server takes 65,536; a longer message adds cost, not recall
NO_CONTEXT_MARKER = "[no-context]"
HEALTH_TIMEOUT_SECONDS = 3.0
PAGE_SIZE = 200
MAX_KEYWORDS = 32  # the server takes at most 64 per list
HIGH_LEVEL_CHARS = 300
LIGHTRAG_CANDIDATES = {
    "top_k": 40,
    "chunk_top_k": 20,
    "max_entity_tokens": 6000,
    "max_relation_tokens": 8000,
    "max_total_tokens": 30000,
}
"""LightRAG's own defaults for how much a query gathers (`TOP_K`, `CHUNK_TOP_K`, ...)."""
OWNERS_PER_STEP = 10
MAX_CANDIDATE_FACTOR = 8


class _AnswerResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")
    response: str = ""
    llm_generated: bool = True


class _DataResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")
    status: str = "success"
    data: QueryData = Field(default_factory=QueryData)


class LightRagAdapter:
    """Talks to one LightRAG server on one `httpx.AsyncClient` (tests may pass their own)."""

    def __init__(
        self,
        config: RuntimeConfigStore,
        env_api_key: SecretStr | None = None,
        client: httpx.AsyncClient | None = None,
        breaker: CircuitBreaker | None = None,
        owners: Callable[[], int] | None = None,
        held: Callable[[str, set[str]], Awaitable[set[str]]] | None = None,
    ) -> None:
        """`owners` counts the users with documents on the server (the index ledger's); in
        `context` style the query asks for more candidates as it grows. `held` (the index
        ledger's) says which of a user's documents they still have: what names a forgotten
        one is left out of the context (`bot/rag/context.py`)."""
        self._config = config
        self._owners = owners
        self._held = held
        self._client = client or httpx.AsyncClient()
        self.breaker = breaker or CircuitBreaker()
        self._http = LightRagHttp(self._client, self.breaker, env_api_key)
        self._late: set[asyncio.Future[str]] = set()
        """Queries past the recall budget, running on to their deadline."""
        self._refusal_logged: str | None = None

    async def aclose(self) -> None:
        for work in list(self._late):
            work.cancel()
        await asyncio.gather(*self._late, return_exceptions=True)
        await self._client.aclose()

    # -- RagRecall -------------------------------------------------------------------------
    async def query(self, text: str, owner: str, config: RuntimeConfig) -> str:
        rag = config.rag
        text = text.strip()
        if not rag.enabled or query_weight(text) < MIN_QUERY_WEIGHT:
            return ""
        if rag.recall_budget_seconds >= rag.timeout_seconds:
            return await self._query(config, text, owner)
        if self._late:
            # A query is still running past its budget: the server is slow or hanging right
            # now, and another turn would only wait the budget out too. Its outcome (an answer,
            # or a time-out that opens the circuit) decides for the turns after it.
            log.info("[RAG] Query skipped: an earlier one is still past its recall budget")
            return ""
        work = asyncio.ensure_future(self._query(config, text, owner))
        try:
            done, _ = await asyncio.wait({work}, timeout=rag.recall_budget_seconds)
        except asyncio.CancelledError:
            work.cancel()
            raise
        if done:
            return work.result()
        # Left to finish in the background: its outcome still reaches the circuit breaker.
        self._late.add(work)
        work.add_done_callback(self._late.discard)
        log.warning(
            "[RAG] Query skipped for this turn: no answer within %gs (rag.recallBudgetSeconds)",
            rag.recall_budget_seconds,
        )
        return ""

    async def _query(self, config: RuntimeConfig, text: str, owner: str) -> str:
        rag = config.rag
        body: dict[str, Any] = {"query": text[:MAX_QUERY_CHARS], "mode": rag.query_mode}
        if rag.query_keywords == "bot":
            body |= query_keywords(body["query"])
        try:
            if self.retrieval_style(config, in_group=owner.startswith(GROUP_PREFIX)) == "answer":
                answer = _AnswerResponse.model_validate(
                    await self._http.call(rag, "POST", "/query", body, on_turn_path=True)
                )
                if not answer.llm_generated or NO_CONTEXT_MARKER in answer.response:
                    return ""
                return answer.response.strip()
            body |= candidate_limits(self._owners() if self._owners else 1)
            found = _DataResponse.model_validate(
                await self._http.call(rag, "POST", "/query/data", body, on_turn_path=True)
            )
        except CallFailed as exc:
            log_failure("Query", exc)
            return ""
        except RagRejected as exc:
            log.warning("[RAG] Query failed: %s", exc)
            return ""
        except ValidationError:
            log.warning("[RAG] Query error: unexpected response shape")
            return ""
        if found.status != "success":
            return ""
        mine = found.data.owned_by(owner)
        if self._held is not None:
            try:
                mine = mine.still_held(await self._held(owner, mine.sources()))
            except Exception as exc:  # the ledger's database is away: say nothing, not too much
                log.warning("[RAG] Query skipped: the index ledger could not be read: %s", exc)
                return ""
        return render_context(mine, rag.context_max_chars)

    def retrieval_style(self, config: RuntimeConfig, in_group: bool = False) -> str:
        """The configured style, but `context` for a group, and while `answer` could show one
        user another's words (`bot/rag/style.py`); logged once each time such a refusal
        begins."""
        owners = self._owners() if self._owners else 1
        refusal = answer_style_refusal(config, owners)
        if refusal and refusal != self._refusal_logged:
            log.warning("[RAG] %s", refusal_notice(refusal))
        self._refusal_logged = refusal
        return effective_style(config, owners, in_group)

    # -- RagUploads ------------------------------------------------------------------------
    async def index(self, document: RagDocument) -> IndexReceipt:
        rag = self._config.current().rag
        body = {"text": document.text, "file_source": document.file_source}
        try:
            answer = await self._http.call(rag, "POST", "/documents/text", body)
        except RagRejected as exc:
            if exc.http_status == 409:  # sent before a crash, or retried after a lost answer
                return IndexReceipt(document.file_source, None, already_present=True)
            log.error("[RAG] Index failed: %s", exc)
            raise
        except CallFailed as exc:
            log_failure("Index", exc)
            raise
        track_id = answer.get("track_id") if isinstance(answer, dict) else None
        return IndexReceipt(document.file_source, str(track_id) if track_id else None)

    async def upload_status(self, track_id: str) -> UploadStatus | None:
        rag = self._config.current().rag
        answer = await self._http.call(rag, "GET", f"/documents/track_status/{track_id}")
        documents = answer.get("documents") if isinstance(answer, dict) else None
        if not documents or not documents[0].get("id"):
            return None
        found = documents[0]
        metadata = found.get("metadata") or {}
        duplicate_of = metadata.get("original_doc_id") if metadata.get("is_duplicate") else None
        return UploadStatus(str(found["id"]), str(duplicate_of) if duplicate_of else None)

    # -- RagDocumentStore ------------------------------------------------------------------
    def is_available(self) -> bool:
        rag = self._config.current().rag
        if not rag.enabled:
            return False
        return self.breaker.state is CircuitState.CLOSED or self.breaker.retry_in() == 0

    async def delete(self, doc_ids: list[str]) -> None:
        rag = self._config.current().rag
        try:
            answer = await self._http.call(
                rag, "DELETE", "/documents/delete_document", _delete_body(doc_ids)
            )
        except CallFailed as exc:
            log_failure("Delete", exc)
            raise
        if isinstance(answer, dict) and answer.get("status") == "busy":
            raise RagUnavailable("LightRAG is busy processing documents; try again shortly")

    async def documents_of(self, owner: str) -> list[StoredDocument]:
        rag = self._config.current().rag
        owner_tag = tag(owner)
        found: list[StoredDocument] = []
        page, pages = 1, 1
        while page <= pages:
            body = {"page": page, "page_size": PAGE_SIZE, "sort_field": "created_at"}
            answer = await self._http.call(rag, "POST", "/documents/paginated", body)
            for doc in answer.get("documents", []):
                source = str(doc.get("file_path") or "")
                if owner_tag_of(source) == owner_tag and doc.get("id"):
                    found.append(StoredDocument(doc_id=str(doc["id"]), file_source=source))
            pages = int(answer.get("pagination", {}).get("total_pages") or 1)
            page += 1
        return found

    async def texts_about(self, owner: str, text: str) -> list[FoundText]:
        """The chunks of `owner`'s documents that `/query/data` finds for `text`, asked as a
        turn's recall asks (mode, keywords, candidates), to delete what holds some words."""
        config = self._config.current()
        rag = config.rag
        text = text.strip()
        if query_weight(text) < MIN_QUERY_WEIGHT:
            return []
        body: dict[str, Any] = {"query": text[:MAX_QUERY_CHARS], "mode": rag.query_mode}
        if rag.query_keywords == "bot":
            body |= query_keywords(body["query"])
        body |= candidate_limits(self._owners() if self._owners else 1)
        try:
            found = _DataResponse.model_validate(
                await self._http.call(rag, "POST", "/query/data", body)
            )
        except CallFailed as exc:
            log_failure("Query", exc)
            raise
        except ValidationError:
            raise RagUnavailable("unexpected response shape") from None
        return [
            FoundText(chunk.file_path.strip().rsplit("/", 1)[-1], chunk.content)
            for chunk in found.data.owned_by(owner).chunks
        ]

    # -- RagHealthCheck --------------------------------------------------------------------
    async def health(self) -> RagHealth:
        """The circuit's view when it is open (no network), else a look at `/health`."""
        rag = self._config.current().rag
        if self.breaker.state is CircuitState.OPEN:
            return RagHealth(False, f"{self.breaker.describe()} at {rag.url}")
        try:
            status, content = await self._http.fetch(
                rag, "GET", "/health", None, min(rag.timeout_seconds, HEALTH_TIMEOUT_SECONDS)
            )
        except CallFailed as exc:
            return RagHealth(False, exc.brief)
        except (httpx.HTTPError, TimeoutError) as exc:
            return RagHealth(False, f"unreachable at {rag.url} ({describe_error(exc)})")
        except AnswerTooLarge:
            return RagHealth(
                False, f"{rag.url}/health sent an answer over {megabytes(MAX_ANSWER_BYTES)}"
            )
        if status != 200:
            return RagHealth(False, f"HTTP {status} from {rag.url}/health")
        try:
            authenticated = "configuration" in json.loads(content)
        except (ValueError, TypeError):
            return RagHealth(False, f"{rag.url}/health sent something that is not JSON")
        if not authenticated:  # /health is public; it shows its configuration only to a key
            return RagHealth(
                False, f"reachable at {rag.url}, but it refuses our key (check RAG_API_KEY)"
            )
        return RagHealth(True, f"healthy at {rag.url}")


def query_keywords(text: str) -> dict[str, list[str]]:
    """Keywords for LightRAG's graph search, so that it need not ask its LLM for them.

    The message's own meaningful words are the low-level (entity) keywords; the message as a
    whole is the one high-level (theme) keyword, which LightRAG matches by embedding.
    """
    words = content_words(text, limit=MAX_KEYWORDS)
    return {"hl_keywords": [" ".join(text.split())[:HIGH_LEVEL_CHARS]], "ll_keywords": words}


def candidate_limits(owners: int) -> dict[str, int]:
    """How much a `/query/data` should gather when `owners` users share the server.

    The server ranks every user's entities, relations and chunks together and the bot keeps
    only the asker's, so each further user's similar memories push the asker's own out of
    the server's top-k. One user: nothing is sent, the server's settings apply. More: LightRAG's
    defaults times 1 + (owners - 1) / 10 (5.9 for 50 users), at most 8 times, so a query on a
    crowded server stays bounded.
    """
    if owners <= 1:
        return {}
    factor = min(1 + (owners - 1) / OWNERS_PER_STEP, MAX_CANDIDATE_FACTOR)
    return {name: round(value * factor) for name, value in LIGHTRAG_CANDIDATES.items()}


def query_weight(text: str) -> int:
    """Length as the server counts it: a CJK character counts as two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _delete_body(doc_ids: list[str]) -> dict[str, Any]:
    """Also the server's cached LLM extractions of those documents: they hold the words, and
    a later rebuild of a shared entity would read them (LightRAG keeps them by default)."""
    return {"doc_ids": doc_ids, "delete_llm_cache": True}
