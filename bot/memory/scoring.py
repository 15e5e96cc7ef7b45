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

Past exchanges, with vectors, compete among themselves (`episode_choice`, in
`bot/memory/exchange_ranking.py`): the `episodicTopK` of them that rank best in meaning and
in words fused, whatever their score, so that a question about months of conversation gets
the messages it is about rather than the freshest lines of chatter; `# Memory` then orders
everything by score.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter

import numpy as np

from bot.config.model import MemoryConfig
from bot.memory.exchange_ranking import episode_choice
from bot.memory.model import ItemType, Layer, MemoryItem, ScoredItem, static_prior
from bot.memory.retention import expired_by
from bot.memory.text import tokens
from bot.memory.user_items import UserItems
from bot.memory.vectors import VectorSearch
from bot.ports.embeddings import Vectors

W_RELEVANCE = 0.45
W_RECENCY = 0.15
"""The other three weights make up `static_prior` (`bot/memory/model.py`)."""

PROFILE_TYPES = frozenset({ItemType.IDENTITY, ItemType.CONSTRAINT})
"""Items that may join without a word in common with the message."""

LEXICAL_POOL = 64
"""Only the best lexical matches are fully scored, which keeps a recall fast at any size; a
weaker match could overtake them only on salience and confidence, by a small margin."""

SEMANTIC_POOL = 8
"""The items nearest in meaning that compete; beyond them a match is too weak to show.
Tuned on the dev split with the bundled e5 model: 8 found 0.92 of the paraphrases (what the
model alone finds), 12 0.89, 16 0.87, 24 0.74 (episodicTopK 6); more neighbours only bring
near-misses that outrank the answer on their priors."""

EPISODE_POOL = 64
"""Past exchanges compete from further down the meaning ranking than facts: a long life holds
hundreds of them, each in the user's own words, and the ones a question needs are often far
down by cosine. Their own ranking (`episode_choice`) picks among these and the word
matches; facts stay within `SEMANTIC_POOL`, where the personal-facts dev split wants them."""

SEMANTIC_FLOOR = 0.3
"""A neighbour in meaning competes only with more than this share of the best cosine (and
more than none): with few items, everything is somebody's nearest neighbour."""

LEXICAL_FLOOR = 0.2
"""With vectors, a word match joins the fusion only when it covers at least this share of the
question's word weight (BM25 against its ceiling; the same fifth `minScore` asks of an
episode). Rank fusion counts ranks, not scores, so a lone common word ("use", "month",
"home") shared with an unrelated item would otherwise rank it like the nearest item in
meaning. Tuned on the dev split: first place for paraphrases 0.32 -> 0.45, recall@6 the same."""

HUB_WEIGHT = 0.5
"""How much of the mean of a user's vectors the question's vector loses before it is compared
with them (`hub_corrected`). Tuned on the long-conversation dev split (five lives, 205
questions; evidence recall at 600 / 300 tokens of `# Memory`): 0: 0.912 / 0.776, 0.3: 0.917 /
0.785, 0.5: 0.932 / 0.785, 0.7: 0.927 / 0.780, 1.0: 0.937 / 0.771; the personal-facts dev
split keeps its 0.921 paraphrase recall at 0.5 and falls to 0.816 at 1.0."""

RRF_K = 3
"""Rank fusion's damping: small, so the first few ranks count far more than the tail."""

PROFILE_TOP_K = 3
"""Identity and constraint items added after the question's own items."""


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
        Layer.DOCUMENT: config.document_top_k,
    }[layer]


def fuse(lexical: dict[str, float], semantic: dict[str, float]) -> dict[str, float]:
    """One relevance per item from the word ranking and the meaning ranking.

    Reciprocal rank fusion: each ranking gives an item `1 / (RRF_K + its rank)`, and the sum is
    scaled so that first in both rankings is 1.0 (first in one of them alone, 0.5). Ranks, not
    raw scores, because BM25 and cosines of different models share no scale. Word matches
    weaker than `LEXICAL_FLOOR` take no rank: they keep their BM25 relevance, as in words-only
    recall, unless the meaning ranking has them too. So a lone common word does not rank an
    item like the nearest in meaning, and an item without a vector yet (still being embedded,
    or its embedding failed) is still found by its words. Without vectors the BM25 relevance
    is kept as it is, so words-only recall behaves as it always did.
    """
    if not semantic:
        return lexical
    strong = {item_id: value for item_id, value in lexical.items() if value >= LEXICAL_FLOOR}
    fused: dict[str, float] = {}
    for ranking in (strong, semantic):
        ordered = sorted(ranking, key=ranking.__getitem__, reverse=True)
        for position, item_id in enumerate(ordered, start=1):
            fused[item_id] = fused.get(item_id, 0.0) + 1 / (RRF_K + position)
    ceiling = 2 / (RRF_K + 1)
    relevance = {item_id: value / ceiling for item_id, value in fused.items()}
    for item_id, value in lexical.items():
        relevance.setdefault(item_id, value)  # weak, and not near in meaning
    return relevance


@dataclass(frozen=True)
class Candidates:
    """What a store found for one message, for `rank_candidates` to fuse and score: the
    file store reads it from its in-memory index (`rank`), PostgreSQL from its queries."""

    lexical: dict[str, float]
    """Items sharing words with the message, with their BM25 relevance in (0, 1]."""
    nearest: dict[str, float]
    """Up to `EPISODE_POOL` items nearest to the message in meaning, with their cosines."""
    items: Mapping[str, MemoryItem]
    """Every item named in `lexical`, `nearest` or `profile` (others are skipped)."""
    profile: list[str]
    """Per layer, the ids of the items with the highest static prior (`PROFILE_TOP_K * 3`)."""


def lexical_pool(lexical: dict[str, float]) -> dict[str, float]:
    """The `LEXICAL_POOL` best word matches, the only ones scored (a store that must fetch
    each item cuts to them before it fetches)."""
    if len(lexical) <= LEXICAL_POOL:
        return lexical
    return dict(heapq.nlargest(LEXICAL_POOL, lexical.items(), key=itemgetter(1)))


def within_pools(nearest: dict[str, float], items: Mapping[str, MemoryItem]) -> dict[str, float]:
    """The `SEMANTIC_POOL` nearest items, and past exchanges down to `EPISODE_POOL`."""
    ordered = sorted(nearest, key=nearest.__getitem__, reverse=True)[:EPISODE_POOL]
    return {
        item_id: nearest[item_id]
        for at, item_id in enumerate(ordered)
        if at < SEMANTIC_POOL
        or ((item := items.get(item_id)) is not None and item.layer is Layer.EPISODIC)
    }


def above_floor(nearest: dict[str, float]) -> dict[str, float]:
    """The neighbours in meaning with more than `SEMANTIC_FLOOR` of the best cosine."""
    floor = max(0.0, SEMANTIC_FLOOR * max(nearest.values(), default=0.0))
    return {item_id: cos for item_id, cos in nearest.items() if cos > floor}


def word_matches(items: UserItems, query: str) -> dict[str, float]:
    """The items sharing words with `query` and their BM25 relevance: the best
    `LEXICAL_POOL` of them."""
    return lexical_pool(items.lexical(tokens(query)))


def hub_corrected(query: Vectors, mean: Vectors | None) -> Vectors:
    """The question's vector less `HUB_WEIGHT` of `mean`, the mean of the vectors it is about
    to be compared with: each one's score is then its cosine to the question less half its
    likeness to the user's average item.

    A small model's vectors share one direction (e5's cosines of unrelated texts sit around
    0.7-0.8), and a short, plain line of chatter lies close to that direction, so it comes
    near to every question: "long day, my brain is fried" ranked 2nd of 61 for "who lives with
    me these days?". Items like the user's average say least about any one question; this is
    the known remedy for such "hubs" (centring, as in CSLS), cheap because the index keeps the
    sum of its rows (`VectorSearch.mean`). The ranking changes, and a score is no longer a
    cosine; only ranks and `SEMANTIC_FLOOR`'s share of the best use them."""
    if mean is None or mean.shape != query.shape:
        return query
    corrected: Vectors = (query - HUB_WEIGHT * mean).astype(np.float32)
    return corrected


def nearest_in_meaning(search: VectorSearch, query_vector: Vectors) -> dict[str, float]:
    """The `EPISODE_POOL` items nearest to the question (`hub_corrected`) and their scores,
    above the floor."""
    return above_floor(search(hub_corrected(query_vector, search.mean), EPISODE_POOL))


def rank(
    items: UserItems,
    query: str,
    now: datetime,
    config: MemoryConfig,
    query_vector: Vectors | None = None,
    words: dict[str, float] | None = None,
    meaning: dict[str, float] | None = None,
) -> list[ScoredItem]:
    """`rank_candidates` over one user's items in memory (the file store).

    `words` and `meaning`: `word_matches(items, query)` and `nearest_in_meaning(…,
    query_vector)` when the caller found them already (the words while the question was being
    embedded, the neighbours of a large user in a worker thread).
    """
    lexical = word_matches(items, query) if words is None else words
    semantic = meaning or {}
    if meaning is None and query_vector is not None and items.vectors is not None:
        semantic = nearest_in_meaning(items.vectors.search_as_now(), query_vector)
    return rank_candidates(
        Candidates(
            lexical=lexical,
            nearest=semantic,
            items=items.items,
            profile=items.strongest(PROFILE_TOP_K * 3),
        ),
        now,
        config,
    )


def rank_candidates(
    candidates: Candidates, now: datetime, config: MemoryConfig
) -> list[ScoredItem]:
    """The best items for the message: at most top-k per layer, best first, then the profile.

    Candidates are the items sharing words with the query and the items nearest to it in
    meaning. Past exchanges make their top-k by `episode_choice` when there are vectors.
    Identity and constraint items that neither found come after them, outside the top-k: they
    matter to most questions, but the top of `# Memory` is what this question is about.
    """
    lexical = lexical_pool(candidates.lexical)
    semantic = within_pools(above_floor(candidates.nearest), candidates.items)

    per_layer: dict[Layer, list[ScoredItem]] = {layer: [] for layer in Layer}
    choice = episode_choice(lexical, semantic, candidates.items)
    for item_id, relevance in fuse(lexical, semantic).items():
        item = candidates.items.get(item_id)
        if item is None or not _recallable(item, now, config):
            continue
        value = score(item, relevance, now, config.decay_days)
        if value >= config.min_score or item_id in choice:
            per_layer[item.layer].append(ScoredItem(item, value, relevance))

    chosen: list[ScoredItem] = []
    for layer, scored in per_layer.items():
        chosen += heapq.nlargest(top_k(config, layer), scored, key=_choice_key(layer, choice))
    chosen = in_pack_order(chosen, choice)
    return chosen + _profile(candidates, {s.item.id for s in chosen}, now, config)


def in_pack_order(chosen: list[ScoredItem], choice: dict[str, float]) -> list[ScoredItem]:
    """`chosen` in the order `# Memory` takes them while there is room: by score, except that
    past exchanges follow their own ranking (`episode_choice`) among themselves. The places
    exchanges hold among the other items stay those their scores give; which exchange takes
    each place goes by the ranking, so that when the budget is short it is the fresh chatter,
    whose score is mostly recency, that is left out rather than the message asked about."""
    by_score = sorted(chosen, key=lambda s: s.score, reverse=True)
    if not choice:
        return by_score
    episodes = [s for s in by_score if s.item.layer is Layer.EPISODIC]
    ranked = iter(sorted(episodes, key=lambda s: -choice.get(s.item.id, 0.0)))
    return [next(ranked) if s.item.layer is Layer.EPISODIC else s for s in by_score]


def _choice_key(layer: Layer, choice: dict[str, float]) -> Callable[[ScoredItem], float]:
    """Which items of a layer make its top-k: past exchanges by their own ranking
    (`episode_choice`), since recency and priors would let a fresh line of chatter displace an
    older message the question is about; anything else by score. Among the chosen, the order
    of `# Memory` is by score."""
    if layer is Layer.EPISODIC and choice:
        return lambda scored: choice.get(scored.item.id, 0.0)
    return lambda scored: scored.score


def _profile(
    candidates: Candidates, taken: set[str], now: datetime, config: MemoryConfig
) -> list[ScoredItem]:
    """The strongest identity and constraint items not chosen already, on their priors."""
    found: list[ScoredItem] = []
    for item_id in candidates.profile:
        item = candidates.items.get(item_id)
        if item is None or item_id in taken or item.type not in PROFILE_TYPES:
            continue
        if _recallable(item, now, config):
            found.append(ScoredItem(item, score(item, 0.0, now, config.decay_days), 0.0))
    found.sort(key=lambda s: s.score, reverse=True)
    return found[:PROFILE_TOP_K]


def oldest_recalled(now: datetime, config: MemoryConfig) -> datetime:
    """The oldest last update of an episode that may be recalled: `lookbackDays` back, or
    the epoch when it is unset (the default: a long life is all recalled)."""
    if config.lookback_days is None:
        return datetime.fromtimestamp(0, tz=now.tzinfo)
    return now - timedelta(days=config.lookback_days)


def _recallable(item: MemoryItem, now: datetime, config: MemoryConfig) -> bool:
    if expired_by(item, now, config):
        return False
    return item.layer is not Layer.EPISODIC or item.updated_at >= oldest_recalled(now, config)
