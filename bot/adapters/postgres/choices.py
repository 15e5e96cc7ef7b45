"""The small per-key choices (`/model`, `/voice`, `/language`) in PostgreSQL: one table,
`choices (kind, key, value)`, behind the file store's interface (`ChoiceStore`,
`bot/storage/choices.py`).

A lookup happens on every message and must not wait on the network: each process keeps every
choice in memory, read at start and again every `REFRESH_SECONDS`, so a choice made in another
process is seen here within that time (this process's own at once). A change is written before
it counts; one the database refuses changes nothing, and the caller says so, as with a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from bot.adapters.postgres.database import Database, DatabaseDown

log = logging.getLogger(__name__)

V = TypeVar("V")

STORE = "choices"
REFRESH_SECONDS = 10.0


class PostgresChoices(Generic[V]):
    """One kind of choice (`ChoiceStore`), as this process last read it."""

    def __init__(self, database: Database, kind: str, value_type: type[V], log_as: str) -> None:
        self._database = database
        self.kind = kind
        self._log_as = log_as
        self._value: TypeAdapter[V] = TypeAdapter(value_type)
        self._chosen: dict[str, V] = {}
        self._lock = asyncio.Lock()
        self.changes = 0
        """Changes made here: a refresh read before one of them does not undo it."""

    def get(self, key: str) -> V | None:
        return self._chosen.get(key)

    async def choose(self, key: str, value: V | None) -> bool:
        """Record `value` for `key` (None: forget it); False when the database refused it."""
        async with self._lock:
            try:
                async with self._database.connection(STORE) as connection:
                    if value is None:
                        await connection.execute(
                            "DELETE FROM choices WHERE kind = %s AND key = %s", (self.kind, key)
                        )
                    else:
                        await connection.execute(
                            "INSERT INTO choices (kind, key, value) VALUES (%s, %s, %s::jsonb) "
                            "ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value",
                            (self.kind, key, self._value.dump_json(value).decode()),
                        )
            except DatabaseDown as exc:
                log.error("%s: could not record a choice: %s", self._log_as, exc)
                return False
            self.changes += 1
            if value is None:
                self._chosen.pop(key, None)
            else:
                self._chosen[key] = value
            return True

    def replace(self, rows: list[tuple[str, Any]], changes_before: int) -> None:
        """Take what the database holds, unless a change here came after it was read."""
        if self.changes != changes_before:
            return
        chosen: dict[str, V] = {}
        for key, raw in rows:
            try:
                chosen[key] = self._value.validate_python(raw)
            except ValidationError:
                log.warning("%s: an unreadable choice for %s is ignored", self._log_as, key)
        self._chosen = chosen


class PostgresChoiceTables:
    """Every kind of choice in the `choices` table: `load` them at start, then `refresh` runs
    in the background until `aclose`."""

    def __init__(self, database: Database, refresh_seconds: float = REFRESH_SECONDS) -> None:
        self._database = database
        self._refresh_seconds = refresh_seconds
        self._kinds: dict[str, PostgresChoices[Any]] = {}
        self._task: asyncio.Task[None] | None = None

    def kind(self, name: str, value_type: type[V], log_as: str) -> PostgresChoices[V]:
        choices = PostgresChoices(self._database, name, value_type, log_as)
        self._kinds[name] = choices
        return choices

    async def load(self) -> None:
        """Read every choice, and keep reading them every `refresh_seconds`."""
        await self.refresh()
        self._task = asyncio.create_task(self._keep_fresh(), name="choices-refresh")

    async def refresh(self) -> None:
        """Read every choice again (a database that cannot be reached: keep what we have)."""
        before = {name: kind.changes for name, kind in self._kinds.items()}
        try:
            async with self._database.connection(STORE, retry=True) as connection:
                cursor = await connection.execute("SELECT kind, key, value FROM choices")
                rows = await cursor.fetchall()
        except DatabaseDown:
            return
        by_kind: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        for kind, key, value in rows:
            by_kind[kind].append((key, value))
        for name, choices in self._kinds.items():
            choices.replace(by_kind[name], before[name])

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _keep_fresh(self) -> None:
        while True:
            await asyncio.sleep(self._refresh_seconds)
            try:
                await self.refresh()
            except Exception as exc:  # a bad row must not end the refreshing
                log.error("[Database] could not read the choices: %s", exc)
