"""A memory item: one remembered fact, how-to or past exchange of one user."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from bot.conversation import utc_now
from bot.memory.text import term_set


class Layer(StrEnum):
    """Where an item lives, which decides its file and how long it is kept.

    Episodic: what was said, one file per day, expires after a TTL. Semantic: facts,
    preferences and constraints about the user. Procedural: how-tos, fixes and commands.
    """

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class ItemType(StrEnum):
    IDENTITY = "identity"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    FACT = "fact"
    HOWTO = "howto"
    EXCHANGE = "exchange"
    NOTE = "note"


TYPE_LAYER = {
    ItemType.IDENTITY: Layer.SEMANTIC,
    ItemType.PREFERENCE: Layer.SEMANTIC,
    ItemType.CONSTRAINT: Layer.SEMANTIC,
    ItemType.FACT: Layer.SEMANTIC,
    ItemType.HOWTO: Layer.PROCEDURAL,
    ItemType.EXCHANGE: Layer.EPISODIC,
    ItemType.NOTE: Layer.EPISODIC,
}
"""The layer an item of each type is written to when it is created directly."""


class MemoryItem(BaseModel):
    """One line of a JSONL memory file. Fields are typed; unknown fields in a file are kept."""

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

    def expired(self, now: datetime) -> bool:
        return self.ttl_days is not None and now - self.updated_at > timedelta(days=self.ttl_days)

    def search_text(self) -> str:
        return " ".join((self.title, self.content, *self.tags))


def fingerprint(item_type: ItemType, content: str, key: str | None = None) -> str:
    """Same type and key (a slot such as "name"), or same words in any order: same fingerprint.

    A keyed fact is replaced when it changes ("my server is at 10.0.0.7" updates the server);
    other items merge only when they say the same thing.
    """
    basis = f"key:{key}" if key else " ".join(sorted(term_set(content)))
    digest = hashlib.blake2b(f"{item_type.value}|{basis}".encode(), digest_size=10)
    return digest.hexdigest()
