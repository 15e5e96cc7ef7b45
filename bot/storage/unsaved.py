"""Sessions a store could not write yet (the disk or the database refused), shared by the
JSON and the PostgreSQL session stores."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from bot.conversation import Session

log = logging.getLogger(__name__)


@dataclass
class Unsaved:
    session: Session
    save: int
    """Which save this is, so a write that raced a newer save does not mark that one done."""
    partial: bool = False
    """Begun without the stored version (the database was away): it goes after that one."""


class UnsavedSessions:
    """The newest unwritten version of each chat, oldest chat first, at most `limit` of them
    (beyond that the oldest is dropped, with a log line)."""

    def __init__(self, limit: int) -> None:
        self._waiting: OrderedDict[str, Unsaved] = OrderedDict()
        self._saves = 0
        self._limit = limit

    def __len__(self) -> int:
        return len(self._waiting)

    def __iter__(self) -> Iterator[Unsaved]:
        return iter(list(self._waiting.values()))

    def keys(self) -> list[str]:
        return list(self._waiting)

    def get(self, key: str) -> Unsaved | None:
        return self._waiting.get(key)

    def keep(self, session: Session, partial: bool = False) -> None:
        """`session` waits to be written, as the chat's newest version."""
        self._saves += 1
        self._waiting[session.key] = Unsaved(session, self._saves, partial)
        self._waiting.move_to_end(session.key)

    def written(self, entry: Unsaved) -> bool:
        """`entry` reached the store: it waits no more, unless saved again meanwhile."""
        current = self._waiting.get(entry.session.key)
        if current is None or current.save != entry.save:
            return False
        del self._waiting[entry.session.key]
        return True

    def discard(self, key: str) -> None:
        self._waiting.pop(key, None)

    def bound(self) -> None:
        while len(self._waiting) > self._limit:
            key, _ = self._waiting.popitem(last=False)
            log.error("[Sessions] more than %d unsaved; dropped chat %s", self._limit, key)
