"""Memory's own types: an item (one remembered fact, how-to or past exchange of one user), an
item as recall ranked it, and what `/memory` shows. The ports (`bot/ports/memory.py`) and the
stores import them from here."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.conversation import utc_now
from bot.memory.text import term_set


class Layer(StrEnum):
    """Where an item lives, which decides its file and how long it is kept.

    Episodic: what was said, one file per day, expires after a TTL. Semantic: facts,
    preferences and constraints about the user. Procedural: how-tos, fixes and commands.
    Document: the text of documents the user shared, in parts (`bot/memory/documents.py`).
    """

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    DOCUMENT = "document"


class ItemType(StrEnum):
    IDENTITY = "identity"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    FACT = "fact"
    HOWTO = "howto"
    EXCHANGE = "exchange"
    DOCUMENT = "document"


@dataclass(frozen=True)
class TypeTraits:
    """What follows from an item's type."""

    layer: Layer
    """Where an item of this type is written when it is created directly."""
    salience: float
    """How much a new item of this type matters, before anything else is known."""
    weight: float
    """The type term of the score (see `bot/memory/scoring.py`)."""
    label: str
    """How `# Memory` and `/memory` name it."""


TRAITS = {
    ItemType.IDENTITY: TypeTraits(Layer.SEMANTIC, 0.9, 1.0, "about the user"),
    ItemType.CONSTRAINT: TypeTraits(Layer.SEMANTIC, 0.9, 1.0, "constraint"),
    ItemType.PREFERENCE: TypeTraits(Layer.SEMANTIC, 0.7, 0.9, "preference"),
    ItemType.FACT: TypeTraits(Layer.SEMANTIC, 0.7, 0.8, "fact"),
    ItemType.HOWTO: TypeTraits(Layer.PROCEDURAL, 0.7, 0.8, "how-to"),
    ItemType.EXCHANGE: TypeTraits(Layer.EPISODIC, 0.3, 0.4, "earlier"),
    ItemType.DOCUMENT: TypeTraits(Layer.DOCUMENT, 0.5, 0.6, "document"),
}

FACT_LAYERS = frozenset({Layer.SEMANTIC, Layer.PROCEDURAL})
"""The layers `/memory` lists one by one and LLM extraction may correct: what the user told,
not what was said in passing (episodes) nor the text of a shared document."""


W_SALIENCE = 0.15
W_CONFIDENCE = 0.15
W_TYPE = 0.10


def static_prior(item: MemoryItem) -> float:
    """The part of an item's score (`bot/memory/scoring.py`) that depends on the item alone,
    not on the message or the clock: `UserItems` keeps its items ranked by it."""
    return (
        W_SALIENCE * item.salience
        + W_CONFIDENCE * item.confidence
        + W_TYPE * TRAITS[item.type].weight
    )


RETIRED_TYPES = {"note": ItemType.FACT}
"""Types that files written by earlier versions may hold, and what they read as now. Nothing
ever created a `note`; the type is kept readable so that no old line is set aside."""


class MemoryItem(BaseModel):
    """One line of a JSONL memory file, its fields typed.

    A field this version does not know is ignored when read, and is gone from a file once it
    is rewritten (forget, promotion, expiry): every line is written by the bot itself, and
    keeping unknown fields would cost every loaded item a dict. A retired type is read as its
    successor (`RETIRED_TYPES`)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:10])
    layer: Layer
    type: ItemType
    title: str
    content: str
    tags: list[str] = Field(default_factory=list)
    source: str = ""
    """Where it came from: `turn:<chat>:<time>`, `tool`, `promotion`. Items of one turn share it."""
    confidence: float = Field(0.5, ge=0, le=1)
    salience: float = Field(0.5, ge=0, le=1)
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    ttl_days: int | None = Field(None, ge=1)
    """Days after the last update when the item is dropped; None keeps it until forgotten."""
    fingerprint: str = ""
    """Equal fingerprints are the same memory: a repeat merges into the item already kept."""

    @field_validator("type", mode="before")
    @classmethod
    def _current_type(cls, value: object) -> object:
        return RETIRED_TYPES.get(value, value) if isinstance(value, str) else value

    def model_post_init(self, context: Any, /) -> None:
        """An item that set every field (each one read from a file, most made in a turn)
        shares one set of their names as its `model_fields_set` instead of a set of its own:
        ~700 bytes an item, a sixth of what a loaded user's items take. Pydantic only ever
        adds a name to it (an assignment), which it holds already, or copies it (`model_copy`)."""
        if self.__pydantic_fields_set__ == _EVERY_FIELD:
            object.__setattr__(self, "__pydantic_fields_set__", _EVERY_FIELD)

    def expired(self, now: datetime) -> bool:
        return self.ttl_days is not None and now - self.updated_at > timedelta(days=self.ttl_days)

    def search_text(self) -> str:
        return " ".join((self.title, self.content, *self.tags))


_EVERY_FIELD: set[str] = set(MemoryItem.model_fields)


def fingerprint(item_type: ItemType, content: str, key: str | None = None) -> str:
    """Same type and key (a slot such as "name"), or same words in any order: same fingerprint.

    A keyed fact is replaced when it changes ("my server is at 10.0.0.7" updates the server);
    other items merge only when they say the same thing.
    """
    basis = f"key:{key}" if key else " ".join(sorted(term_set(content)))
    digest = hashlib.blake2b(f"{item_type.value}|{basis}".encode(), digest_size=10)
    return digest.hexdigest()


def new_item(
    item_type: ItemType,
    content: str,
    *,
    source: str,
    confidence: float,
    title: str | None = None,
    now: datetime | None = None,
    key: str | None = None,
    identified_by: str | None = None,
    ttl_days: int | None = None,
) -> MemoryItem:
    """A fresh item of `item_type`, in its layer, with its type's salience and fingerprint.

    `identified_by` is the text whose words make two items the same (default: `content`).
    """
    at = now or utc_now()
    return MemoryItem(
        layer=TRAITS[item_type].layer,
        type=item_type,
        title=title or shorten(content, 60),
        content=content,
        tags=[key] if key else [],
        source=source,
        confidence=confidence,
        salience=TRAITS[item_type].salience,
        created_at=at,
        updated_at=at,
        ttl_days=ttl_days,
        fingerprint=fingerprint(item_type, identified_by or content, key),
    )


def reworded(item: MemoryItem, item_type: ItemType, content: str, now: datetime) -> MemoryItem:
    """`item` saying something newer ("lives in Berlin" for "lives in Porto"), same id.

    A fact with a slot keeps it, so the rules' next "I live in …" still lands on this item.
    """
    slot = next(
        (tag for tag in item.tags if fingerprint(item.type, "", tag) == item.fingerprint), None
    )
    layer = TRAITS[item_type].layer
    return item.model_copy(
        update={
            "layer": layer,
            "type": item_type,
            "title": shorten(content, 60),
            "content": content,
            "updated_at": now,
            "ttl_days": item.ttl_days if layer is Layer.EPISODIC else None,
            "fingerprint": fingerprint(item_type, content, slot),
        }
    )


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class ScoredItem:
    """An item as recall ranked it: its final score and how well it matched the query."""

    item: MemoryItem
    score: float
    relevance: float


@dataclass(frozen=True)
class MemoryOverview:
    """What `/memory` shows: facts and how-tos newest first, how many episodes there are, and
    how many parts of shared documents (each document's note is among the facts)."""

    facts: list[MemoryItem]
    episodes: int
    document_parts: int = 0
