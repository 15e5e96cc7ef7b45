"""Small per-key choices kept on disk: a chat's `/model`, its `/voice`, a user's `/language`.

One JSON file per kind of choice, `{"<field>": {"<key>": <value>}}`, read once at start and
rewritten atomically (0600) on each change, so a lookup is a dict read, cheap on every
message. A change the disk refuses changes nothing: the caller says so to the user, rather
than keep a choice that would not survive a restart. A damaged file is logged once and the
choices start afresh (whoever needs to fail closed instead, as `/remember off` does, keeps
its own file). With `DATABASE_URL` they live in PostgreSQL instead
(`bot/adapters/postgres/choices.py`), behind the same `ChoiceStore`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

from bot.storage.atomic import write_atomic

log = logging.getLogger(__name__)

V = TypeVar("V")


class ChoiceStore(Protocol[V]):
    """Choices by key: a lookup that never waits (it runs on every message), and a change
    that is stored before it counts."""

    def get(self, key: str) -> V | None: ...

    async def choose(self, key: str, value: V | None) -> bool:
        """Record `value` for `key` (None: forget it); False when the store refused it."""
        ...


class KeyedChoices(Generic[V]):
    """Choices by key (a session key, a user id), each a `V` that pydantic can read back."""

    def __init__(self, path: Path | None, field: str, value_type: type[V], log_as: str) -> None:
        """`field` names the file's one object (kept as older files have it); `log_as` is
        the component and command of log lines, e.g. `[Models] /model`. `path` None: the
        choices last until the bot stops (tests)."""
        self.path = path
        self._field = field
        self._log_as = log_as
        self._file: TypeAdapter[dict[str, dict[str, V]]] = TypeAdapter(
            dict[str, dict[str, value_type]]  # type: ignore[valid-type]
        )
        self._chosen: dict[str, V] = self._read()
        self._lock = asyncio.Lock()

    def get(self, key: str) -> V | None:
        return self._chosen.get(key)

    async def choose(self, key: str, value: V | None) -> bool:
        """Record `value` for `key` (None: forget the choice); False when the disk refused it."""
        async with self._lock:
            chosen = dict(self._chosen)
            if value is None:
                chosen.pop(key, None)
            else:
                chosen[key] = value
            try:
                if self.path is not None:
                    data = self._file.dump_json({self._field: chosen}, indent=1)
                    await asyncio.to_thread(write_atomic, self.path, data)
            except OSError as exc:
                log.error("%s: could not record a choice: %s", self._log_as, exc)
                return False
            self._chosen = chosen
            return True

    def _read(self) -> dict[str, V]:
        if self.path is None:
            return {}
        try:
            return self._file.validate_json(self.path.read_bytes()).get(self._field, {})
        except FileNotFoundError:
            return {}
        except (OSError, ValidationError) as exc:
            log.error(
                "%s: %s is unreadable (%s); the choices start afresh",
                self._log_as,
                self.path,
                str(exc).splitlines()[0],
            )
            return {}
