"""Short-term structured memory: what context building, the persist system, the `memory` tool
and the memory commands all talk to, on either backend.

`MemoryService` decides what is kept and what is recalled: a repeat merges into the item it
repeats (`fingerprints`, `merge`), a confident episode is promoted, candidates are ranked
(`rank_candidates`) and packed, exchanges are stored in the background, items the repository
refused wait in memory and are retried, and items are embedded in the background
(`Embeddings`). Where items are kept is a `MemoryRepository` (`bot/memory/repository.py`):
per-user files (`bot/memory/file_repository.py`) or PostgreSQL
(`bot/adapters/postgres/memory.py`), chosen in `bot/stores.py`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from datetime import datetime

from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.episodes import promotable, promoted
from bot.memory.exchanges import RemembersExchanges
from bot.memory.model import (
    FACT_LAYERS,
    ItemType,
    Layer,
    MemoryItem,
    MemoryOverview,
    ScoredItem,
    fingerprint,
    reworded,
)
from bot.memory.packing import pack
from bot.memory.repository import Embedded, MemoryRepository, Question
from bot.memory.retention import ttl_applies
from bot.memory.scoring import rank_candidates
from bot.memory.semantic import Embeddings, worth_embedding
from bot.ports.embeddings import EmbeddingPort
from bot.ports.health import StoreDown

log = logging.getLogger(__name__)

REPEAT_WEIGHT = 0.8
"""How much a repeat counts as fresh evidence: 0.5 twice gives 0.7, three times 0.82."""


class MemoryService(RemembersExchanges):
    """Short-term memory over a `MemoryRepository`: every protocol of `bot/ports/memory.py`
    but the extractor's queue, and a `Backlog` (what the repository refused waits, as given,
    `max_unwritten` items at most, and is written, merged as ever, once it is back).

    While the repository cannot be reached (`StoreDown`) a turn still answers: recall gives
    no `# Memory`, and what it would store waits. `/memory`, `/forget` and the `memory` tool
    say they failed rather than pretend."""

    label = "short-term memory items"
    unwritten_label = "unsaved memory item(s)"

    def __init__(
        self,
        repository: MemoryRepository,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], datetime] = utc_now,
        embedder: EmbeddingPort | None = None,
        timer: Callable[[], float] = time.monotonic,
        max_unwritten: int = 5_000,
    ) -> None:
        super().__init__()
        self.repository = repository
        self._config = config
        self._clock = clock
        self._embeddings = Embeddings(embedder, lambda: config().embeddings, repository, timer)
        self._max_unwritten = max_unwritten
        self._unwritten: OrderedDict[str, list[MemoryItem]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        """`memory.enabled` of the runtime config, as it is now."""
        return self._config().enabled

    # -- reading ----------------------------------------------------------------------------

    async def recall(self, user_id: str, query: str, config: MemoryConfig | None = None) -> str:
        """The `# Memory` pack for this user and message; empty when nothing scores enough or
        the repository is away.

        `config` is the turn's snapshot; None (outside a turn) takes the config as it is now."""
        config = config or self._config()
        try:
            found = await self._rank(user_id, query, config, recall=True)
        except StoreDown:
            return ""
        packed = pack(found, config)
        if packed.lines:
            log.info("[Memory] recalled %d items (%d tokens)", len(packed.items), packed.tokens)
        return packed.text()

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]:
        """Items sharing words (or meaning) with `query`, best first, whatever their layer's
        top-k."""
        relaxed = relaxed_for_search(self._config(), limit)
        found = await self._rank(user_id, query, relaxed, recall=False)
        return [scored for scored in found if scored.relevance > 0][:limit]

    async def nearest(self, user_id: str, text: str, limit: int) -> list[MemoryItem]:
        """Facts and how-tos `text` may confirm or contradict, for LLM extraction to judge.

        Items sharing words with `text` come first, then the user's newest and strongest ones:
        "I moved to Berlin" shares no word with "The user lives in Porto", yet supersedes it.
        Episodes and a shared document's parts are left out: they record what was said or
        shared, they are not facts to correct.
        """
        found = {
            scored.item.id: scored.item
            for scored in await self.search(user_id, text, limit)
            if scored.item.layer in FACT_LAYERS
        }
        others = await self.repository.recent_facts(user_id, self._clock(), limit)
        for item in sorted(others, key=lambda item: item.updated_at, reverse=True):
            found.setdefault(item.id, item)
        return list(found.values())[:limit]

    async def overview(self, user_id: str) -> MemoryOverview:
        return overview_of(await self.live_items(user_id))

    async def live_items(self, user_id: str) -> list[MemoryItem]:
        """Every item of this user that has not expired."""
        return await self.repository.live_items(user_id, self._clock())

    async def count_for(self, user_id: str) -> int:
        count = await self.repository.count(user_id, self._clock())
        return count + len(self._unwritten.get(user_id, ()))

    # -- writing ----------------------------------------------------------------------------

    async def add(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        """Store `new_items`, each merged into a kept item that it repeats (`fingerprints`).

        An item that becomes confident enough (by `config`, as in `recall`) is promoted on the
        spot. Returns the items as stored (a merged item keeps its first id); while the
        repository is away they wait, as given, and are returned."""
        if not new_items:
            return []
        config = config or self._config()
        try:
            stored = await self._write(user_id, new_items, config)
        except StoreDown:
            self._keep_unwritten(user_id, new_items)
            return new_items
        if self._unwritten:
            await self.retry_unwritten()
        self._embeddings.fill_in_background(user_id)
        return stored

    async def replace(
        self, user_id: str, item_id: str, item_type: ItemType, content: str
    ) -> MemoryItem | None:
        """Give one item new wording and type under the same id: a newer fact superseding it
        (its vector goes with the old wording, and the new one is embedded)."""
        async with self.repository.writing(user_id) as owner:
            old = await owner.get(item_id)
            if old is None:
                return None
            new = reworded(old, item_type, content, self._clock())
            await owner.put([new], set())
        log.info("[Memory] updated item %s", item_id)
        self._embeddings.fill_in_background(user_id)
        return new

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user (another user's id is simply not found)."""
        gone = await self.forget_many(user_id, [item_id])
        return gone[0] if gone else None

    async def forget_many(self, user_id: str, item_ids: Collection[str]) -> list[MemoryItem]:
        """Delete these items of this user, their vectors too; returns those found."""
        wanted = set(item_ids)
        waiting = [item for item in self._unwritten.pop(user_id, []) if item.id not in wanted]
        if waiting:  # a version waiting for the repository must not bring an item back
            self._unwritten[user_id] = waiting
        gone = await self.repository.forget_many(user_id, wanted)
        if len(gone) == 1:
            log.info("[Memory] forgot item %s", gone[0].id)
        elif gone:
            log.info("[Memory] forgot %d items", len(gone))
        return gone

    async def parts_of(self, user_id: str, document_id: str) -> list[MemoryItem]:
        """The parts of a shared document (`bot/memory/documents.py`), in order."""
        return await self.repository.parts_of(user_id, document_id)

    async def forget_user(self, user_id: str) -> int:
        """Delete every item of this user, those waiting for the repository too.

        Exchanges of this user still being stored in the background are let finish first,
        so that the last thing said before "forget everything" does not outlive it."""
        await self._exchanges_stored(user_id)
        waiting = len(self._unwritten.pop(user_id, ()))
        count = await self.repository.forget_user(user_id) + waiting
        log.info("[Memory] forgot all %d items of a user", count)
        return count

    async def drain(self) -> None:
        """Wait for writes, loads and embeddings still running in the background (at
        shutdown, and in tests)."""
        while pending := [
            *self._background,
            *self._embeddings.pending(),
            *self.repository.pending(),
        ]:
            await asyncio.gather(*pending, return_exceptions=True)

    def unwritten(self) -> int:
        return sum(len(items) for items in self._unwritten.values())

    async def retry_unwritten(self) -> None:
        """Write what waits, oldest owner first; stops at the first refusal."""
        config = self._config()
        for user_id in list(self._unwritten):
            items = self._unwritten.pop(user_id, [])
            try:
                await self._write(user_id, items, config, retry=True)
            except StoreDown:
                self._unwritten[user_id] = items + self._unwritten.get(user_id, [])
                self._unwritten.move_to_end(user_id, last=False)
                return
            self._embeddings.fill_in_background(user_id)

    def embed_missing(self, user_id: str) -> None:
        """Embed this user's items that lack a vector, in the background (a repository calls
        it once it has read a user's items: their vectors are then read with them)."""
        self._embeddings.fill_in_background(user_id)

    # -- internals --------------------------------------------------------------------------

    async def _rank(
        self, user_id: str, query: str, config: MemoryConfig, recall: bool
    ) -> list[ScoredItem]:
        """The repository's candidates for `query`, ranked by `rank_candidates`. A recall
        for small talk that asks nothing goes by words alone (`worth_embedding`); a search
        (the memory tool, extraction's `nearest`) always embeds its text."""
        now = self._clock()
        embeds = self._embeddings.embeds and (not recall or worth_embedding(query))

        async def vector(settle: bool) -> Embedded | None:
            if not embeds:
                return None
            return await self._embeddings.query_vector(user_id, query, settle)

        question = Question(
            text=query,
            recall=recall,
            embeds=embeds,
            vector=vector,
            exchanges_stored=lambda: self._exchanges_stored(user_id),
            vectors_opened=lambda: self._embeddings.fill_in_background(user_id),
        )
        candidates = await self.repository.candidates(user_id, question, now, config)
        return rank_candidates(candidates, now, config)

    async def _write(
        self, user_id: str, new_items: list[MemoryItem], config: MemoryConfig, retry: bool = False
    ) -> list[MemoryItem]:
        """Merge and promote `new_items` under the owner's write lock; returns them as
        stored, once each."""
        threshold = config.promotion_min_confidence
        async with self.repository.writing(user_id, retry) as owner:
            now = self._clock()
            kept = await owner.kept([fp for new in new_items for fp in fingerprints(new)], now)
            stored: dict[str, MemoryItem] = {}
            promoted_ids: set[str] = set()
            for new in new_items:
                existing = next((kept[fp] for fp in fingerprints(new) if fp in kept), None)
                item = merge(existing, new, now) if existing is not None else new
                if promotable(item, threshold):
                    item = promoted(item, now)
                    promoted_ids.add(item.id)
                    log.info("[Memory] promoted %s to %s", item.id, item.layer.value)
                kept[item.fingerprint] = kept[new.fingerprint] = item
                stored[item.id] = item
            await owner.put(list(stored.values()), promoted_ids)
            await owner.tidy(now, config.max_episodes, expire=ttl_applies(config))
        return list(stored.values())

    def _keep_unwritten(self, user_id: str, items: list[MemoryItem]) -> None:
        self._unwritten.setdefault(user_id, []).extend(items)
        self._unwritten.move_to_end(user_id)
        while self.unwritten() > self._max_unwritten and self._unwritten:
            dropped, lost = self._unwritten.popitem(last=False)
            log.error(
                "[Memory] more than %d items wait for the database; dropped %d of %s",
                self._max_unwritten,
                len(lost),
                dropped,
            )


def fingerprints(item: MemoryItem) -> list[str]:
    """What makes a kept item the same memory as `item`, in order: the same fingerprint, or
    (for a fact with a slot) the same words. The second look lets "my server is at 10.0.0.5",
    extracted after the model already stored "The user's server is at 10.0.0.5" with the memory
    tool in the same turn, merge with it."""
    found = [item.fingerprint] if item.fingerprint else []
    return [*found, fingerprint(item.type, item.content)]


def relaxed_for_search(config: MemoryConfig, limit: int) -> MemoryConfig:
    """`config` for the `memory` tool's search: up to `limit` per layer, any score, any age."""
    return config.model_copy(
        update={
            "min_score": 0.0,
            "semantic_top_k": limit,
            "procedural_top_k": limit,
            "episodic_top_k": limit,
            "document_top_k": limit,
            "lookback_days": 3650,
        }
    )


def overview_of(live: list[MemoryItem]) -> MemoryOverview:
    """What `/memory` shows of these live items: facts and how-tos newest first, and how
    many episodes and parts of shared documents there are."""
    facts = [item for item in live if item.layer in FACT_LAYERS]
    facts.sort(key=lambda item: item.updated_at, reverse=True)
    parts = sum(1 for item in live if item.layer is Layer.DOCUMENT)
    return MemoryOverview(facts, len(live) - len(facts) - parts, parts)


def merge(existing: MemoryItem, new: MemoryItem, now: datetime) -> MemoryItem:
    """`new` said again what `existing` holds: one item, newer wording, more confidence."""
    confidence = 1 - (1 - existing.confidence) * (1 - REPEAT_WEIGHT * new.confidence)
    return existing.model_copy(
        update={
            "title": new.title,
            "content": new.content,
            "tags": list(dict.fromkeys([*existing.tags, *new.tags])),
            "source": new.source,
            "confidence": round(min(1.0, confidence), 4),
            "salience": max(existing.salience, new.salience),
            "updated_at": now,
            "ttl_days": new.ttl_days if existing.ttl_days is not None else None,
            "fingerprint": new.fingerprint or existing.fingerprint,
        }
    )
