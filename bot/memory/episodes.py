"""Turning one exchange into memory items: the durable facts in it, and the exchange itself.

The exchange becomes an episodic item only when it has substance. Greetings, thanks, "ok",
one-word messages and very short exchanges are dropped: the same filters RAG indexing uses,
plus a floor on meaningful words. An exchange asked again merges with the first one (same
fingerprint: the same words in the user's message) and grows more confident each time, which
is what promotes it to semantic or procedural memory: repetition, never a keyword.
"""

from __future__ import annotations

import re
from datetime import datetime

from bot.memory.extraction import extract_facts
from bot.memory.facts import Fact
from bot.memory.items import TYPE_LAYER, ItemType, Layer, MemoryItem, fingerprint
from bot.memory.text import tokens

_GREETING_PHRASES = frozenset(
    phrase.strip()
    for line in """hi, hello, hey, bye, thanks, thank you, ok, okay, yes, no, привет, пока,
    спасибо, да, нет, thx, ty, cool, nice, great, sure, good morning, good night, good evening,
    how are you, lol, got it, sounds good, perfect, awesome, здравствуйте, спасибо большое,
    хорошо, ладно, понятно, доброе утро, как дела, отлично""".splitlines()
    for phrase in line.split(",")
    if phrase.strip()
)
MIN_EXCHANGE_CHARS = 50
MIN_MEANINGFUL_WORDS = 2
USER_CHARS = 280
ASSISTANT_CHARS = 220

SALIENCE = {
    ItemType.IDENTITY: 0.9,
    ItemType.CONSTRAINT: 0.9,
    ItemType.PREFERENCE: 0.7,
    ItemType.FACT: 0.7,
    ItemType.HOWTO: 0.7,
    ItemType.NOTE: 0.5,
    ItemType.EXCHANGE: 0.3,
}
EPISODE_CONFIDENCE = 0.5

_TRAILING = re.compile(r"[\s.!?,;:…)(]+$")
_HOWTO_QUESTION = re.compile(r"^(?:how|как)\b", re.IGNORECASE)
_HOWTO_ANSWER = re.compile(r"`|\$ |\bcommand|\bкоманд", re.IGNORECASE)


def is_trivial_exchange(user_text: str, assistant_text: str | None) -> bool:
    """Greetings, thanks, near-empty messages and blank answers are not worth an episode."""
    if not assistant_text or not assistant_text.strip():
        return True
    said = _TRAILING.sub("", user_text.strip().lower())
    if said in _GREETING_PHRASES:
        return True
    if len(user_text.strip()) + len(assistant_text.strip()) < MIN_EXCHANGE_CHARS:
        return True
    return len(set(tokens(user_text))) < MIN_MEANINGFUL_WORDS


def items_from_exchange(
    user_text: str, assistant_text: str | None, source: str, now: datetime, episode_ttl_days: int
) -> list[MemoryItem]:
    """The facts the user stated, then the exchange as an episode (unless trivial)."""
    found = [fact_item(fact, source, now) for fact in extract_facts(user_text)]
    if not is_trivial_exchange(user_text, assistant_text):
        found.append(episode(user_text, assistant_text or "", source, now, episode_ttl_days))
    return found


def fact_item(fact: Fact, source: str, now: datetime) -> MemoryItem:
    return MemoryItem(
        layer=TYPE_LAYER[fact.type],
        type=fact.type,
        title=_title(fact.content),
        content=fact.content,
        tags=[fact.key] if fact.key else [],
        source=source,
        confidence=fact.confidence,
        salience=SALIENCE[fact.type],
        created_at=now,
        updated_at=now,
        fingerprint=fingerprint(fact.type, fact.content, fact.key),
    )


def episode(
    user_text: str, assistant_text: str, source: str, now: datetime, ttl_days: int
) -> MemoryItem:
    content = (
        f"User: {_cut(user_text, USER_CHARS)} → Assistant: {_cut(assistant_text, ASSISTANT_CHARS)}"
    )
    return MemoryItem(
        layer=Layer.EPISODIC,
        type=ItemType.EXCHANGE,
        title=_title(user_text),
        content=content,
        source=source,
        confidence=EPISODE_CONFIDENCE,
        salience=SALIENCE[ItemType.EXCHANGE],
        created_at=now,
        updated_at=now,
        ttl_days=ttl_days,
        fingerprint=fingerprint(ItemType.EXCHANGE, user_text),
    )


def promoted(item: MemoryItem, now: datetime) -> MemoryItem:
    """`item` moved out of the episodic layer: a how-to when it looks like one, else a fact."""
    how_to = bool(_HOWTO_QUESTION.search(item.title) or _HOWTO_ANSWER.search(item.content))
    item_type = ItemType.HOWTO if how_to else ItemType.FACT
    return item.model_copy(
        update={
            "layer": TYPE_LAYER[item_type],
            "type": item_type,
            "ttl_days": None,
            "salience": max(item.salience, SALIENCE[item_type]),
            "updated_at": now,
        }
    )


def _title(text: str) -> str:
    return _cut(text, 60)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
