"""Forgetting one item everywhere it lives, for `/forget <id>` and the `memory` tool alike.

Short-term memory's cascade (`bot/memory/forgetting.py`) deletes the item, the conversation
snippets holding its words and a document's parts; the long-term stores that can be searched
by words (LightRAG's documents) then lose the conversations that said it, or the document's
pieces. Users mostly say "forget my PIN" in words, and the model forgets through its tool: it
must go as completely as by the command, or recall would bring the same words back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from bot.memory.episodes import said_and_answered
from bot.memory.forgetting import Forgotten, forget_with_its_words, holds_words
from bot.memory.model import Layer
from bot.ports.memory import BrowsableMemory, ForgetsByWords, LeavesTraces, UserMemoryStore
from bot.rag.documents import shared_pieces_prefix

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForgottenEverywhere:
    """What forgetting one item deleted, in short-term memory and beyond."""

    short_term: Forgotten
    long_term: int = 0
    """Entries deleted from long-term stores (LightRAG's documents)."""
    long_term_failed: bool = False
    """A long-term store could not be searched or could not delete: it may still hold them."""


async def forget_everywhere(
    memory: BrowsableMemory, stores: Sequence[UserMemoryStore], owner: str, item_id: str
) -> ForgottenEverywhere | None:
    """Delete `owner`'s item `item_id` and what holds its words, in `memory` and in each of
    `stores` that forgets by words; None when the owner has no such item."""
    gone = await forget_with_its_words(memory, owner, item_id)
    if gone is None:
        return None
    deleted, failed = 0, False
    for store in stores:
        if not isinstance(store, ForgetsByWords):
            continue
        try:
            count = await _forget_in(store, owner, gone) if await store.count_for(owner) else 0
        except Exception as exc:
            log.warning("[Memory] forgetting an item: long-term memory failed: %s", exc)
            failed = True
            continue
        if count and isinstance(store, LeavesTraces):
            store.traces_left(owner)  # logged by the store; the reply says what may remain
        deleted += count
    return ForgottenEverywhere(gone, deleted, failed)


async def _forget_in(store: ForgetsByWords, owner: str, gone: Forgotten) -> int:
    """A document's pieces when the item was its note, else the entries holding its words
    (a snippet's: the user's words only, not the answer's)."""
    item = gone.item
    if gone.parts:
        return await store.forget_shared_at(owner, shared_pieces_prefix(owner, item.created_at))
    words = said_and_answered(item.content)[0] if item.layer is Layer.EPISODIC else item.content
    return await store.forget_holding(owner, words, lambda text: holds_words(text, words))
