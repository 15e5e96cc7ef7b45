"""BM25 over one user's items, kept up to date in place on every write.

Libraries such as bm25s and rank-bm25 build an index once from a whole corpus and cannot add
or drop a document: the bot writes after almost every turn, so they would rebuild on each
one. This inverted index adds and removes an item in time proportional to its own words.

A query reads whole postings only for its rarer words (at most `SCAN_LIMIT` items each). A
word held by more items than that adds its weight only to the items the rarer words found;
a query made only of such common words looks at the newest `SCAN_LIMIT` items holding its
rarest word. So a recall costs about the same at 10k items as at 100k: an item reachable only
through common words, and not among the newest, is the price.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import islice

K1 = 1.2
B = 0.75
SCAN_LIMIT = 2_000
"""Postings longer than this are not read whole (see the module docstring)."""


class LexicalIndex:
    """Term -> {item id: term frequency}, with item lengths for BM25's length normalisation."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._terms_of: dict[str, tuple[str, ...]] = {}
        self._length: dict[str, int] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._length)

    def add(self, item_id: str, terms: list[str]) -> None:
        """Index `item_id` under `terms` (a repeat of an id replaces its old entry)."""
        if item_id in self._length:
            self.remove(item_id)
        counts = Counter(terms)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[item_id] = tf
        self._terms_of[item_id] = tuple(counts)
        self._length[item_id] = len(terms)
        self._total_length += len(terms)

    def add_many(self, entries: Iterable[tuple[str, list[str]]]) -> None:
        """`add` of each (item id, terms) in turn, without its per-call overhead (a cold load)."""
        postings, terms_of, length = self._postings, self._terms_of, self._length
        total = 0
        for item_id, terms in entries:
            if item_id in length:
                self.remove(item_id)
            counts = Counter(terms)
            for term, tf in counts.items():
                posting = postings.get(term)
                if posting is None:
                    postings[term] = {item_id: tf}
                else:
                    posting[item_id] = tf
            terms_of[item_id] = tuple(counts)
            length[item_id] = len(terms)
            total += len(terms)
        self._total_length += total

    def remove(self, item_id: str) -> None:
        for term in self._terms_of.pop(item_id, ()):
            posting = self._postings[term]
            del posting[item_id]
            if not posting:
                del self._postings[term]
        self._total_length -= self._length.pop(item_id, 0)

    def relevance(self, query_terms: list[str]) -> dict[str, float]:
        """Items sharing a word with the query, each with a relevance in (0, 1].

        BM25 divided by its ceiling for this query (every query term present, often): 1.0 means
        the item holds all of the query's words, 0.5 roughly half of their weight. A query
        word no item contains still counts in the ceiling, so a partial match stays partial.
        """
        count = len(self._length)
        unique = sorted(set(query_terms), key=lambda term: len(self._postings.get(term, ())))
        if not count or not unique:
            return {}
        norm = K1 * (1 - B)
        slope = K1 * B / (self._total_length / count or 1.0)
        length = self._length
        ceiling = 0.0
        scores: dict[str, float] = {}
        for term in unique:
            posting = self._postings.get(term, {})
            idf = inverse_frequency(count, len(posting))
            ceiling += idf * (K1 + 1)
            for item_id, tf in _entries(posting, scores):
                gain = idf * tf * (K1 + 1) / (tf + norm + slope * length[item_id])
                scores[item_id] = scores.get(item_id, 0.0) + gain
        return {item_id: score / ceiling for item_id, score in scores.items()}


def inverse_frequency(count: int, holding: int) -> float:
    """BM25's idf of a word that `holding` of `count` items hold."""
    return math.log(1 + (count - holding + 0.5) / (holding + 0.5))


def relevance_among(
    query_terms: list[str],
    documents: Iterable[tuple[str, int, Sequence[int]]],
    holding: Sequence[int],
    count: int,
    total_length: int,
) -> dict[str, float]:
    """`LexicalIndex.relevance` where a database found the items: `query_terms` distinct,
    `documents` (item id, its length in terms, how often it holds each query term) of items
    sharing a word with the query, `holding` how many of the user's `count` items hold each
    query term, `total_length` their terms in all. Same formula, same scale."""
    if not count or not query_terms:
        return {}
    norm = K1 * (1 - B)
    slope = K1 * B / (total_length / count or 1.0)
    idf = [inverse_frequency(count, held) for held in holding]
    ceiling = sum(weight * (K1 + 1) for weight in idf)
    scores: dict[str, float] = {}
    for item_id, length, counts in documents:
        gain = sum(
            weight * tf * (K1 + 1) / (tf + norm + slope * length)
            for weight, tf in zip(idf, counts, strict=True)
            if tf
        )
        if gain > 0:
            scores[item_id] = gain / ceiling
    return scores


def _entries(posting: dict[str, int], found: dict[str, float]) -> Iterable[tuple[str, int]]:
    """The (item, term frequency) pairs of `posting` worth scoring, at most about SCAN_LIMIT."""
    if len(posting) <= SCAN_LIMIT:
        return list(posting.items())
    if found:
        return [(item_id, posting[item_id]) for item_id in found if item_id in posting]
    return list(islice(reversed(posting.items()), SCAN_LIMIT))
