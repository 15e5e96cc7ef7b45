"""The reminder book's port (`ReminderStore`), and its file store: every reminder and each
user's time zone in one private JSON file in the data dir (PostgreSQL's is
`bot/adapters/postgres/reminders.py`).

The whole file is rewritten atomically (`write_atomic`: temp file, fsync, rename) on every
change, from a worker thread, one write at a time and in order; a crash leaves the previous
version or the new one. A damaged file is moved aside (`*.corrupt-<time>.json`) and the bot
starts with none, saying so in the log. The file stays small: each user keeps at most
`reminders.maxPerUser`, and only allowed users reach the tool.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field, ValidationError

from bot.reminders.model import Reminder, TooManyReminders
from bot.storage.atomic import write_atomic

log = logging.getLogger(__name__)


class _BookFile(BaseModel):
    reminders: list[Reminder] = Field(default_factory=list)
    timezones: dict[str, str] = Field(default_factory=dict)
    """user id -> IANA zone the user chose; users not here have `reminders.defaultTimezone`."""


class ReminderStore(Protocol):
    """What the desk and the scheduler ask of a reminder book; also a `UserMemoryStore` (a
    user's reminders and time zone count in `/memory` and go with `/forget all`). Each change
    is stored when the call returns; a store that refuses it raises `OSError`, and then
    nothing changed."""

    label: str

    async def all(self) -> list[Reminder]:
        """Every reminder kept (for tests)."""
        ...

    async def get(self, reminder_id: str) -> Reminder | None: ...

    async def in_chat(self, session_key: str) -> list[Reminder]:
        """The chat's (or forum topic's) reminders that are still to come, soonest first."""
        ...

    async def soonest(self, limit: int) -> list[Reminder]:
        """The `limit` reminders the scheduler acts on first (by `due_at`), soonest first."""
        ...

    async def interrupted(self) -> list[Reminder]:
        """Reminders a stop cut short: a `firing` mark, or a delivery not yet in its session."""
        ...

    async def timezone_of(self, user_id: str) -> str | None: ...

    async def new_id(self) -> str: ...

    async def add(self, reminder: Reminder, limit: int) -> None:
        """Keep `reminder`, unless its setter already has `limit` still to come
        (`TooManyReminders`): counted and added as one step, so two requests at once cannot
        both slip under the limit."""
        ...

    async def update(self, reminder: Reminder) -> bool:
        """Keep `reminder` in place of the one with its id, or drop it when it has no time
        left and nothing to record. False (nothing written) when it is gone: cancelled
        meanwhile, which a delivery in progress must not undo."""
        ...

    async def remove(self, reminder_id: str) -> Reminder | None: ...

    async def set_timezone(self, user_id: str, zone: str) -> None: ...

    async def count_for(self, user_id: str) -> int: ...

    async def forget_user(self, user_id: str) -> int: ...


def kept_after_update(reminder: Reminder) -> bool:
    """An updated reminder stays while it has a time left or a delivery to finish."""
    return bool(reminder.next_at or reminder.firing or reminder.unrecorded)


class ReminderBook:
    """`ReminderStore` in one JSON file: the reminders in memory, written through to disk."""

    label = "reminders and your time zone"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = self._load()
        self._write_lock = asyncio.Lock()

    # -- reading -----------------------------------------------------------------------------
    async def all(self) -> list[Reminder]:
        return list(self._file.reminders)

    async def get(self, reminder_id: str) -> Reminder | None:
        return self._get(reminder_id)

    async def in_chat(self, session_key: str) -> list[Reminder]:
        waiting = [r for r in self._file.reminders if r.session_key == session_key and r.next_at]
        return sorted(waiting, key=lambda r: r.next_at or r.created_at)

    async def soonest(self, limit: int) -> list[Reminder]:
        timed = [(r.due_at, r) for r in self._file.reminders if r.due_at is not None]
        return [r for _, r in heapq.nsmallest(limit, timed, key=lambda pair: pair[0])]

    async def interrupted(self) -> list[Reminder]:
        return [r for r in self._file.reminders if r.firing or r.unrecorded]

    async def timezone_of(self, user_id: str) -> str | None:
        return self._file.timezones.get(user_id)

    async def new_id(self) -> str:
        taken = {r.id for r in self._file.reminders}
        while (candidate := secrets.token_hex(3)) in taken:
            pass
        return candidate

    # -- changing (each change is on disk when the call returns) -------------------------------
    async def add(self, reminder: Reminder, limit: int) -> None:
        """Raises OSError when the disk refuses it; then nothing was added."""
        mine = [r for r in self._file.reminders if r.user_id == reminder.user_id and r.next_at]
        if len(mine) >= limit:  # no wait between this count and the append
            raise TooManyReminders(len(mine))
        self._file.reminders.append(reminder)
        try:
            await self.save()
        except OSError:
            self._file.reminders.remove(reminder)
            raise

    async def update(self, reminder: Reminder) -> bool:
        if self._get(reminder.id) is None:
            return False
        kept = [r for r in self._file.reminders if r.id != reminder.id]
        if kept_after_update(reminder):
            kept.append(reminder)
        self._file.reminders = kept
        await self.save()
        return True

    async def remove(self, reminder_id: str) -> Reminder | None:
        found = self._get(reminder_id)
        if found is None:
            return None
        self._file.reminders = [r for r in self._file.reminders if r.id != reminder_id]
        await self.save()
        return found

    async def set_timezone(self, user_id: str, zone: str) -> None:
        self._file.timezones[user_id] = zone
        await self.save()

    async def save(self) -> None:
        """Serialised here, on the loop (so no change slips in half-way), written on a thread."""
        data = self._file.model_dump_json().encode("utf-8")
        async with self._write_lock:
            await asyncio.to_thread(write_atomic, self.path, data)

    # -- UserMemoryStore ----------------------------------------------------------------------
    async def count_for(self, user_id: str) -> int:
        zone = 1 if user_id in self._file.timezones else 0
        return sum(1 for r in self._file.reminders if r.user_id == user_id) + zone

    async def forget_user(self, user_id: str) -> int:
        count = await self.count_for(user_id)
        if not count:
            return 0
        self._file.reminders = [r for r in self._file.reminders if r.user_id != user_id]
        self._file.timezones.pop(user_id, None)
        await self.save()
        return count

    def _get(self, reminder_id: str) -> Reminder | None:
        return next((r for r in self._file.reminders if r.id == reminder_id), None)

    def _load(self) -> _BookFile:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return _BookFile()
        try:
            return _BookFile.model_validate_json(raw)
        except (ValidationError, ValueError) as exc:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            aside = self.path.with_name(f"{self.path.stem}.corrupt-{stamp}.json")
            self.path.rename(aside)
            log.error("[Reminders] %s is damaged (%s); moved to %s", self.path, exc, aside.name)
            return _BookFile()
