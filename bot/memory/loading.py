"""Reading one user's items from their files into memory: a cold load, run in a worker thread.

A heavy user's episodes take seconds to parse and index (100k items), their facts and how-tos
a fraction of that. So the facts and how-tos are read first and handed over, indexed, for a
recall that cannot wait; the whole set follows. Each stage is built whole in the thread and
never touched by it again once handed over. The result is the same as putting each live item
into `UserItems` in file order, as loading always did; it is only built in bulk.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.memory.episodes import promotable, promoted
from bot.memory.files import UserFiles
from bot.memory.model import MemoryItem
from bot.memory.text import tokens
from bot.memory.user_items import UserItems


def read_items(
    files: UserFiles,
    now: datetime,
    promotion_threshold: float,
    on_quick: Callable[[UserItems], None] | None = None,
    stored_ttl: bool = True,
) -> tuple[UserItems, list[MemoryItem]]:
    """Every live item of the user, indexed, and the episodes promoted on the way (they became
    confident enough under a lowered threshold; the caller writes them).

    `on_quick` is handed the facts and how-tos, indexed, before the episodes are read.
    `stored_ttl` False: TTLs stored with items are cleared (`UserFiles.load`).
    """
    known_terms: dict[str, tuple[MemoryItem, list[str]]] = {}

    def layered_read(layered: list[MemoryItem]) -> None:
        assert on_quick is not None
        terms = [tokens(item.search_text()) for item in layered]
        known_terms.update((item.id, (item, t)) for item, t in zip(layered, terms, strict=True))
        on_quick(UserItems.of(layered, terms))

    def terms_of(item: MemoryItem) -> list[str]:
        known = known_terms.pop(item.id, None)  # tokenized for the quick stage already
        if known is not None and known[0] is item:
            return known[1]
        return tokens(item.search_text())

    loaded: list[MemoryItem] = []
    ready: list[MemoryItem] = []
    for item in files.load(now, layered_read if on_quick is not None else None, stored_ttl):
        if promotable(item, promotion_threshold):
            item = promoted(item, now)
            ready.append(item)
        loaded.append(item)
    return UserItems.of(loaded, (terms_of(item) for item in loaded)), ready
