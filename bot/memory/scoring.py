"""How much an item deserves a place in `# Memory` for this message.

    score = 0.45 * relevance + 0.15 * recency + 0.15 * salience + 0.15 * confidence
            + 0.10 * type weight

Every term lies in [0, 1], so a score does too. Relevance is BM25 against the user's
message, scaled to its ceiling (see `LexicalIndex.relevance`). Recency halves every
`decayDays` since the item was last confirmed.

Which items may compete at all: those sharing a word with the message and scoring at least
`minScore` (a fresh past exchange needs about a fifth of the message's word weight, an old
one more), plus the user's profile, identity and constraint items ("my name is…", "I'm
allergic to…"), which matter to almost any question and so need no shared word. A how-to or
an old exchange with nothing in common with the message never comes in on its priors alone.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter
from typing import TYPE_CHECKING

from bot.config.model import MemoryConfig
from bot.memory.items import TRAITS, ItemType, Layer, MemoryItem
from bot.memory.text import tokens

if TYPE_CHECKING:
    from bot.memory.user_items import UserItems

W_RELEVANCE = 0.45
W_RECENCY = 0.15
W_SALIENCE = 0.15
W_CONFIDENCE = 0.15
W_TYPE = 0.10

PROFILE_TYPES = frozenset({ItemType.IDENTITY, ItemType.CONSTRAINT})
"""Items that may join without a word in common with the message."""

LEXICAL_POOL = 64
"""Only the best lexical matches are fully scored, which keeps a recall fast at any size; a
weaker match could overtake them only on salience and confidence, by a small margin."""


@dataclass(frozen=True)
class ScoredItem:
    item: MemoryItem
    score: float
    relevance: float


def static_prior(item: MemoryItem) -> float:
    """The part of the score that does not depend on the message or the clock."""
    return (
        W_SALIENCE * item.salience
        + W_CONFIDENCE * item.confidence
        + W_TYPE * TRAITS[item.type].weight
    )


def recency(item: MemoryItem, now: datetime, decay_days: float) -> float:
    idle_days = max(0.0, (now - item.updated_at).total_seconds() / 86_400)
    return 0.5 ** (idle_days / decay_days)


def score(item: MemoryItem, relevance: float, now: datetime, decay_days: float) -> float:
    return W_RELEVANCE * relevance + W_RECENCY * recency(item, now, decay_days) + static_prior(item)


def top_k(config: MemoryConfig, layer: Layer) -> int:
    return {
        Layer.SEMANTIC: config.semantic_top_k,
        Layer.PROCEDURAL: config.procedural_top_k,
        Layer.EPISODIC: config.episodic_top_k,
    }[layer]


def rank(items: UserItems, query: str, now: datetime, config: MemoryConfig) -> list[ScoredItem]:
    """The best items for `query`: at most top-k per layer, best first."""
    pool = max(config.semantic_top_k, config.procedural_top_k, config.episodic_top_k) * 3 + 5
    candidates = items.candidates(tokens(query), pool)
    lexical = [pair for pair in candidates.items() if pair[1] > 0]
    if len(lexical) > LEXICAL_POOL:
        keep = dict(heapq.nlargest(LEXICAL_POOL, lexical, key=itemgetter(1)))
        candidates = {k: v for k, v in candidates.items() if v == 0 or k in keep}
    oldest_episode = now - timedelta(days=config.lookback_days)

    per_layer: dict[Layer, list[ScoredItem]] = {layer: [] for layer in Layer}
    for item_id, relevance in candidates.items():
        item = items.get(item_id)
        if item is None or item.expired(now):
            continue
        if item.layer is Layer.EPISODIC and item.updated_at < oldest_episode:
            continue
        if relevance == 0 and item.type not in PROFILE_TYPES:
            continue
        value = score(item, relevance, now, config.decay_days)
        if relevance == 0 or value >= config.min_score:
            per_layer[item.layer].append(ScoredItem(item, value, relevance))

    chosen: list[ScoredItem] = []
    for layer, scored in per_layer.items():
        chosen += heapq.nlargest(top_k(config, layer), scored, key=lambda s: s.score)
    chosen.sort(key=lambda s: s.score, reverse=True)
    return chosen
