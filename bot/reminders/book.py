"""Every reminder and each user's time zone, in one private JSON file in the data dir.

The whole file is rewritten atomically (`write_atomic`: temp file, fsync, rename) on every
change, from a worker thread, one write at a time and in order; a crash leaves the previous
version or the new one. A damaged file is moved aside (`*.corrupt-<time>.json`) and the bot
starts with none, saying so in the log. The file stays small: each user keeps at most
`reminders.maxPerUser`, and only allowed users reach the tool.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from bot.reminders.model import Reminder
from bot.storage.atomic import write_atomic

log = logging.getLogger(__name__)


class _BookFile(BaseModel):
    reminders: list[Reminder] = Field(default_factory=list)
    timezones: dict[str, str] = Field(default_factory=dict)
    """user id -> IANA zone the user chose; users not here have `reminders.defaultTimezone`."""


class ReminderBook:
    """The reminders in memory, written through to disk. Also a `UserMemoryStore`: a user's
    reminders and time zone count in `/memory` and go with `/forget all`."""

    label = "reminders and your time zone"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = self._load()
        self._write_lock = asyncio.Lock()

    # -- reading -----------------------------------------------------------------------------
    def all(self) -> list[Reminder]:
        return list(self._file.reminders)

    def get(self, reminder_id: str) -> Reminder | None:
        return next((r for r in self._file.reminders if r.id == reminder_id), None)

    def in_chat(self, session_key: str) -> list[Reminder]:
        """The chat's (or forum topic's) reminders that are still to come, soonest first."""
        waiting = [r for r in self._file.reminders if r.session_key == session_key and r.next_at]
        return sorted(waiting, key=lambda r: r.next_at or r.created_at)

    def count_of(self, user_id: str) -> int:
        return sum(1 for r in self._file.reminders if r.user_id == user_id and r.next_at)

    def timezone_of(self, user_id: str) -> str | None:
        return self._file.timezones.get(user_id)

    def new_id(self) -> str:
        taken = {r.id for r in self._file.reminders}
        while (candidate := secrets.token_hex(3)) in taken:
            pass
        return candidate

    # -- changing (each change is on disk when the call returns) -------------------------------
    async def add(self, reminder: Reminder) -> None:
        """Raises OSError when the disk refuses it; then nothing was added."""
        self._file.reminders.append(reminder)
        try:
            await self.save()
        except OSError:
            self._file.reminders.remove(reminder)
            raise

    async def update(self, reminder: Reminder) -> bool:
        """Keep `reminder` in place of the one with its id, or drop it when it has no time
        left and nothing to record. False (nothing written) when it is gone: cancelled
        meanwhile, which a delivery in progress must not undo."""
        if self.get(reminder.id) is None:
            return False
        kept = [r for r in self._file.reminders if r.id != reminder.id]
        if reminder.next_at is not None or reminder.firing or reminder.unrecorded:
            kept.append(reminder)
        self._file.reminders = kept
        await self.save()
        return True

    async def remove(self, reminder_id: str) -> Reminder | None:
        found = self.get(reminder_id)
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
