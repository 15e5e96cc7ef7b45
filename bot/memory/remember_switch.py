"""`/remember off|on`: the users who asked the bot to stop remembering, kept on disk.

One small JSON file, `<data dir>/memory/remember-off.json`, outside every user's memory
folder, so `/forget all` does not quietly turn remembering back on. It is read once at start
and rewritten atomically on each change; `is_remembering` is a set lookup, cheap every turn.
If the file cannot be read, nobody is remembered until an operator fixes or removes it:
failing open would store what people asked the bot not to store.

With `DATABASE_URL` the switch is a choice in PostgreSQL instead (kind `remember-off`, a
`ChoiceStore`), shared by every process on the database: another process sees it within the
choices' refresh (`bot/adapters/postgres/choices.py`, 10 s), this one at once. `/forget all`
leaves it, as it leaves the file.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from pydantic import BaseModel, ValidationError

from bot.conversation.scope import MemoryScope
from bot.i18n.catalogue import memory as texts
from bot.storage.atomic import write_atomic
from bot.storage.choices import ChoiceStore

log = logging.getLogger(__name__)


class _RememberOff(BaseModel):
    user_ids: list[str] = []


class RememberSwitch:
    """Per-user on/off; everyone starts on. Implements the `RememberingPreference` port,
    and `StatusProvider` so that `/status` says so when nothing new is being remembered."""

    def __init__(self, path: Path, store: ChoiceStore[bool] | None = None) -> None:
        """`store`: the choices in a database, shared by several processes (then `path` is
        not read); None keeps them in the file at `path`."""
        self.path = path
        self.damaged: str | None = None
        self._store = store
        self._off: set[str] = self._read() if store is None else set()
        self._lock = asyncio.Lock()

    def is_remembering(self, user_id: str) -> bool:
        return self.damaged is None and not self._is_off(user_id)

    def _is_off(self, user_id: str) -> bool:
        if self._store is not None:
            return self._store.get(user_id) is True
        return user_id in self._off

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        """The asker's own switch, in whichever chat they ask."""
        if self.damaged is not None:
            return [texts.remembering_off_for_everyone(self.path.name)]
        if self._is_off(scope.speaker_id):
            return [texts.remembering_off_for_you()]
        return []

    async def set_remembering(self, user_id: str, on: bool) -> bool:
        """Record the choice; False when the file is damaged and must be fixed first, or the
        disk refuses it (then nothing changes: a choice that would not survive a restart)."""
        async with self._lock:
            if self.damaged is not None:
                return False
            if on == self.is_remembering(user_id):
                return True
            if self._store is not None:
                return await self._store.choose(user_id, None if on else True)
            off = set(self._off)
            if on:
                off.discard(user_id)
            else:
                off.add(user_id)
            data = _RememberOff(user_ids=sorted(off)).model_dump_json(indent=1).encode()
            try:
                await asyncio.to_thread(write_atomic, self.path, data)
            except OSError as exc:
                log.error("[Memory] could not record a /remember choice: %s", exc)
                return False
            self._off = off
            log.info("[Memory] remembering turned %s for a user", "on" if on else "off")
            return True

    def _read(self) -> set[str]:
        try:
            return set(_RememberOff.model_validate_json(self.path.read_bytes()).user_ids)
        except FileNotFoundError:
            return set()
        except (OSError, ValidationError) as exc:
            self.damaged = str(exc).splitlines()[0]
            log.error(
                "[Memory] %s is unreadable (%s): remembering is off for everyone until it is "
                "fixed or removed",
                self.path,
                self.damaged,
            )
            return set()
