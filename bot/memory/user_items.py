"""Every live item of one user in memory, indexed for recall; the files stay the record."""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence

from bot.memory.index import LexicalIndex
from bot.memory.model import Layer, MemoryItem, static_prior
from bot.memory.text import tokens
from bot.memory.vectors import VectorIndex
from bot.ports.embeddings import Vectors


class UserItems:
    """Items by id and by fingerprint, a BM25 index, the vectors of the embedding model in use
    (once memory has opened them), and per layer two short lists of candidates that need no
    word in common with the query: the newest items, and the strongest by salience,
    confidence and type (a user's name matters to most questions).

    Every change updates these in place, so a recall never rebuilds anything.
    """

    def __init__(self) -> None:
        self.items: dict[str, MemoryItem] = {}
        self._by_fingerprint: dict[str, str] = {}
        self._index = LexicalIndex()
        self._newest: dict[Layer, dict[str, None]] = {layer: {} for layer in Layer}
        self._strongest: dict[Layer, list[tuple[float, str]]] = {layer: [] for layer in Layer}
        self._prior: dict[str, float] = {}
        self._vectors: VectorIndex | None = None
        self._unembedded: dict[str, None] = {}

    @classmethod
    def of(cls, items: Sequence[MemoryItem], terms: Iterable[list[str]] | None = None) -> UserItems:
        """The same as `put` of each item in turn (their ids distinct), in one pass: a cold load.

        `terms` are the items' `tokens(search_text())`, when the caller has them already; an
        iterator lets each list go once indexed (freeing 100k lists at once, in one C call,
        would hold the GIL for tens of milliseconds).
        Each list of the strongest is sorted once rather than kept sorted item by item.
        Called in a worker thread by a cold load: nothing else may see `built` until it is
        returned.
        """
        built = cls()
        if terms is None:
            terms = (tokens(item.search_text()) for item in items)
        built._index.add_many(zip((item.id for item in items), terms, strict=True))
        for item in items:
            built.items[item.id] = item
            if item.fingerprint:
                built._by_fingerprint[item.fingerprint] = item.id
            built._newest[item.layer][item.id] = None
            prior = built._prior[item.id] = static_prior(item)
            built._strongest[item.layer].append((prior, item.id))
        if len(built.items) != len(items):
            raise ValueError("UserItems.of needs distinct item ids")
        for layer, ranked in built._strongest.items():
            built._strongest[layer] = _sorted_in_steps(ranked)
        return built

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self.items.values())

    def get(self, item_id: str) -> MemoryItem | None:
        return self.items.get(item_id)

    def by_fingerprint(self, fingerprint: str) -> MemoryItem | None:
        item_id = self._by_fingerprint.get(fingerprint)
        return self.items.get(item_id) if item_id else None

    def put(self, item: MemoryItem) -> None:
        """Add `item`, or replace the item with its id (its layer or text may have changed)."""
        old = self.items.get(item.id)
        if old is not None:
            self._unlink(old)
        self.items[item.id] = item
        if item.fingerprint:
            self._by_fingerprint[item.fingerprint] = item.id
        if old is None or old.search_text() != item.search_text():
            self._index.add(item.id, tokens(item.search_text()))
        if self._vectors is not None and (old is None or old.content != item.content):
            self._vectors.remove(item.id)  # new, or stale: the new wording is embedded again
            self._unembedded[item.id] = None
        self._newest[item.layer][item.id] = None
        prior = static_prior(item)
        self._prior[item.id] = prior
        bisect.insort(self._strongest[item.layer], (prior, item.id))

    def remove(self, item_id: str) -> MemoryItem | None:
        item = self.items.pop(item_id, None)
        if item is not None:
            self._unlink(item)
            self._index.remove(item_id)
            if self._vectors is not None:
                self._vectors.remove(item_id)
            self._unembedded.pop(item_id, None)
        return item

    @property
    def vectors(self) -> VectorIndex | None:
        """The vectors of the embedding model in use, once memory has opened them."""
        return self._vectors

    def open_vectors(self, index: VectorIndex, missing: list[str] | None = None) -> None:
        """Use `index` from now on; the items it lacks are the ones left to embed.

        `missing` is those items, in order, when the caller found them already (a worker
        thread, while no write could change the items).
        """
        self._vectors = index
        if missing is None:
            missing = [item_id for item_id in self.items if item_id not in index]
        self._unembedded = dict.fromkeys(missing)

    def embedded(self, batch: list[MemoryItem], vectors: Vectors) -> tuple[list[str], Vectors]:
        """Vectors for `batch` arrived; returns the ids and vectors taken in. An item forgotten
        or reworded while it was being embedded is not one of them: a reworded one waits for
        a vector of its new wording."""
        if self._vectors is None:
            return [], vectors[:0]
        current = [at for at, item in enumerate(batch) if self.items.get(item.id) is item]
        ids, kept = [batch[at].id for at in current], vectors[current]
        self._vectors.put_many(ids, kept)
        for item_id in ids:
            self._unembedded.pop(item_id, None)
        return ids, kept

    def without_vectors(self, limit: int) -> list[MemoryItem]:
        """Up to `limit` items the open vector index lacks (none while it is not open)."""
        found: list[MemoryItem] = []
        for item_id in self._unembedded:
            found.append(self.items[item_id])
            if len(found) >= limit:
                break
        return found

    def _unlink(self, item: MemoryItem) -> None:
        if self._by_fingerprint.get(item.fingerprint) == item.id:
            del self._by_fingerprint[item.fingerprint]
        self._newest[item.layer].pop(item.id, None)
        ranked = self._strongest[item.layer]
        entry = (self._prior.pop(item.id), item.id)
        position = bisect.bisect_left(ranked, entry)
        if position < len(ranked) and ranked[position] == entry:
            del ranked[position]

    def lexical(self, query_terms: list[str]) -> dict[str, float]:
        """Items sharing a word with the query, with their BM25 relevance in (0, 1]."""
        return self._index.relevance(query_terms)

    def newest(self, per_layer: int) -> list[str]:
        """Per layer, the ids of the `per_layer` items written last."""
        found: list[str] = []
        for layer in Layer:
            for at, item_id in enumerate(reversed(self._newest[layer])):
                if at >= per_layer:
                    break
                found.append(item_id)
        return found

    def count(self, layer: Layer) -> int:
        return len(self._newest[layer])

    def oldest(self, layer: Layer, count: int) -> list[str]:
        """The ids of the `count` items of `layer` updated longest ago."""
        return list(itertools.islice(self._newest[layer], count))

    def strongest(self, per_layer: int) -> list[str]:
        """Per layer, the ids of the `per_layer` items with the highest static prior."""
        return [
            item_id
            for layer in Layer
            for _, item_id in reversed(self._strongest[layer][-per_layer:])
        ]


SORT_STEP = 4_096
"""Entries sorted in one C call at most by `_sorted_in_steps`."""


def _sorted_in_steps(entries: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """`sorted(entries)`. A long list is sorted in runs merged by `heapq.merge`, which is
    Python code: sorting 80k entries in one call would hold the GIL, and so pause the event
    loop, for some 50 ms; between steps the loop gets its turn."""
    if len(entries) <= SORT_STEP:
        return sorted(entries)
    runs = [sorted(entries[at : at + SORT_STEP]) for at in range(0, len(entries), SORT_STEP)]
    return list(heapq.merge(*runs))
