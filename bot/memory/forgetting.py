"""Forget means forget: `/forget <id>` of a fact also deletes what would bring its words back.

A fact is rarely the only place its words live. The exchange it was said in is kept as an
episode (a conversation snippet), and so is any later one that said it again; a shared
document's note stands for the document's parts. Deleting the fact alone, recall would find
the same words in the snippet at the next question. So forgetting an item also deletes:

- the episodes of the same turn (the same `source`) and every other episode whose user's
  words hold most of the fact's meaningful words (`holds_words`);
- a document's parts, when the item is its note (`bot/memory/documents.py`).

`/memory <words>` shows what recall would bring back about a topic, with the id of each
item of every kind, so that anything can be looked at and deleted. The same for either
store: it uses only `BrowsableMemory`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.memory.episodes import said_and_answered
from bot.memory.model import FACT_LAYERS, Layer, MemoryItem, ScoredItem
from bot.memory.text import tokens
from bot.ports.memory import BrowsableMemory

SAME_WORDS_SHARE = 0.6
"""The share of a fact's meaningful words an episode must hold to be said to hold it (the
packing's `SAID_BY_FACT`): "btw my sister Olga lives in Porto" holds "The user's sister Olga
lives in Porto."; "my sister called" does not."""
SNIPPETS_LOOKED_AT = 50
"""Episodes nearest to a forgotten fact that are checked for its words."""
SHOWN_PER_KIND = 10
"""Items per kind `/memory <words>` lists."""


@dataclass(frozen=True)
class Forgotten:
    """What one `/forget <id>` deleted."""

    item: MemoryItem
    snippets: list[MemoryItem] = field(default_factory=list)
    """Conversation snippets (episodes) that held the same words."""
    parts: int = 0
    """Parts of the document whose note `item` was."""


@dataclass(frozen=True)
class Recallable:
    """What `/memory <words>` lists: items recall could bring back for those words, by kind."""

    facts: list[MemoryItem]
    snippets: list[MemoryItem]
    parts: list[MemoryItem]


async def forget_with_its_words(
    memory: BrowsableMemory, owner: str, item_id: str
) -> Forgotten | None:
    """Delete one item and what holds its words (see the module docstring); None when the
    owner has no such item."""
    item = await memory.forget(owner, item_id)
    if item is None:
        return None
    parts = await memory.parts_of(owner, item.id)
    gone_parts = await memory.forget_many(owner, [part.id for part in parts]) if parts else []
    snippets: list[MemoryItem] = []
    if item.layer in FACT_LAYERS:
        holding = await snippets_holding(memory, owner, item)
        if holding:
            snippets = await memory.forget_many(owner, [found.id for found in holding])
    return Forgotten(item, snippets, len(gone_parts))


async def snippets_holding(
    memory: BrowsableMemory, owner: str, fact: MemoryItem
) -> list[MemoryItem]:
    """The owner's episodes that said `fact`: of its turn, or holding most of its words."""
    found = await memory.search(owner, fact.content, SNIPPETS_LOOKED_AT)
    return [
        scored.item
        for scored in found
        if scored.item.layer is Layer.EPISODIC
        and (
            (fact.source and scored.item.source == fact.source)
            or holds_words(said_and_answered(scored.item.content)[0], fact.content)
        )
    ]


def holds_words(text: str, of: str, share: float = SAME_WORDS_SHARE) -> bool:
    """Whether `text` holds at least `share` of the meaningful words of `of` (two at least;
    "user", which every fact names, aside)."""
    wanted = set(tokens(of)) - {"user"}
    if len(wanted) < 2:
        return False
    return len(wanted & set(tokens(text))) >= share * len(wanted)


async def recallable(memory: BrowsableMemory, owner: str, words: str) -> Recallable:
    """What recall could bring back about `words`, best first, up to `SHOWN_PER_KIND` a kind."""
    found: list[ScoredItem] = await memory.search(owner, words, SHOWN_PER_KIND)
    items = [scored.item for scored in found]
    return Recallable(
        facts=[item for item in items if item.layer in FACT_LAYERS],
        snippets=[item for item in items if item.layer is Layer.EPISODIC],
        parts=[item for item in items if item.layer is Layer.DOCUMENT],
    )
