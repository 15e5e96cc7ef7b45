"""Token usage in PostgreSQL: one row per LLM call in `usage_calls`, shared by every process
on the database: a user's usage today (budgets, `/usage`) is read from the table, so three
processes spend one budget, not three. The same promises as the day files
(`bot/usage/ledger.py`).

`record` is called on every LLM call and must return at once: it counts in memory (what
`today` falls back on while the database is away) and hands the row to one background
writer, which sends what has piled up in one round trip; `today` adds the rows still
waiting. Rows the database refuses wait in memory (up to `max_unwritten`, the oldest dropped
first, with a log line) and go with the next write or retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date

from bot.adapters.postgres.database import Database, DatabaseDown
from bot.ports.llm import TokenUsage
from bot.usage.ledger import DailyTallies, Tally, utc_today

log = logging.getLogger(__name__)

STORE = "usage ledger"


@dataclass(frozen=True)
class _Call:
    day: date
    who: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cut: bool


class ReadWriteGate:
    """Reads (any number at once) and writes (one at a time) never overlap, a waiting write
    going first: a read then finds each of this process's rows either in the table or still
    waiting in memory, never in flight, so none is counted twice or missed."""

    def __init__(self) -> None:
        self._readers = 0
        self._no_readers = asyncio.Event()
        self._no_readers.set()
        self._no_writer = asyncio.Event()
        self._no_writer.set()
        self._one_writer = asyncio.Lock()  # the background writer and a retry, one at a time

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        while not self._no_writer.is_set():
            await self._no_writer.wait()
        self._readers += 1
        self._no_readers.clear()
        try:
            yield
        finally:
            self._readers -= 1
            if not self._readers:
                self._no_readers.set()

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        async with self._one_writer:
            self._no_writer.clear()  # new reads wait from here: a write is never starved
            try:
                await self._no_readers.wait()
                yield
            finally:
                self._no_writer.set()


class PostgresUsageLedger:
    """`UsageRecords` on PostgreSQL; `load` it once the database is open."""

    unwritten_label = "usage record(s)"

    def __init__(
        self,
        database: Database,
        today: Callable[[], date] = utc_today,
        max_unwritten: int = 10_000,
    ) -> None:
        self._database = database
        self._tallies = DailyTallies(today)
        self._waiting: deque[_Call] = deque()
        self._max_unwritten = max_unwritten
        self._writer: asyncio.Task[None] | None = None
        self._gate = ReadWriteGate()
        self._dropping = False
        database.health.add_backlog(self)

    async def load(self) -> None:
        """Today's totals so far (an earlier run's): what `today` falls back on while the
        database is away; from zero, with a log line, when the database cannot say."""
        try:
            written = await self._written(self._tallies.day)
        except DatabaseDown:
            log.error("[Usage] could not read today's usage; counting from zero")
            return
        for who, models in written.items():
            for model, tally in models.items():
                self._tallies.tally(who, model).merge(tally)

    def record(self, who: str, model: str, usage: TokenUsage) -> None:
        """Count one call of `who` with `model`; the row is written in the background."""
        self._tallies.add(who, model, usage)
        day = self._tallies.day
        call = _Call(day, who, model, usage.prompt_tokens, usage.completion_tokens, usage.cut)
        self._waiting.append(call)
        if len(self._waiting) > self._max_unwritten:
            self._waiting.popleft()
            if not self._dropping:  # one line per outage
                log.error("[Usage] over %d rows unsaved; dropping the oldest", self._max_unwritten)
            self._dropping = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="usage-write")

    async def today(self, who: str) -> dict[str, Tally]:
        """`who`'s usage today across every process on the database (`_shared`)."""
        return (await self._shared(who)).get(who, {})

    async def today_all(self) -> dict[str, dict[str, Tally]]:
        return await self._shared(None)

    async def _shared(self, who: str | None) -> dict[str, dict[str, Tally]]:
        """Today's rows of every process, with this process's not yet written; while the
        database is away, what this process counted and read at start. The gate keeps this
        process's writes apart from the read, so each row counts once."""
        self._tallies.roll_over()
        day = self._tallies.day
        try:
            async with self._gate.reading():
                found = await self._written(day, who)
                waiting = list(self._waiting)
        except DatabaseDown:
            return self._tallies.today_all() if who is None else {who: self._tallies.today(who)}
        for call in waiting:
            if call.day == day and who in (None, call.who):
                tally = found.setdefault(call.who, {}).setdefault(call.model, Tally())
                tally.merge(Tally(1, call.prompt_tokens, call.completion_tokens, int(call.cut)))
        return found

    async def _written(self, day: date, who: str | None = None) -> dict[str, dict[str, Tally]]:
        """The rows of `day` (of `who` only, when given) in the table, summed."""
        query = (
            "SELECT who, model, count(*), sum(prompt_tokens), sum(completion_tokens), "
            "count(*) FILTER (WHERE cut) FROM usage_calls WHERE day = %s"
            + ("" if who is None else " AND who = %s")
            + " GROUP BY who, model"
        )
        async with self._database.connection(STORE) as connection:
            cursor = await connection.execute(query, (day,) if who is None else (day, who))
            rows = await cursor.fetchall()
        found: dict[str, dict[str, Tally]] = {}
        for name, model, calls, prompt, completion, cut in rows:
            tally = Tally(int(calls), int(prompt), int(completion), int(cut))
            found.setdefault(name, {})[model] = tally
        return found

    def unwritten(self) -> int:
        return len(self._waiting)

    async def retry_unwritten(self) -> None:
        await self.drain()
        await self._write(retry=True)

    async def drain(self) -> None:
        """Wait for the background writer (at shutdown, and in tests)."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)

    async def _write(self, retry: bool = False) -> None:
        """Send every waiting row, in batches, until none waits or the database refuses."""
        while self._waiting:
            async with self._gate.writing():
                batch = list(self._waiting)
                try:
                    await self._insert(batch, retry)
                except DatabaseDown:
                    return  # they wait for the next record or retry
                self._dropping = False
                written = {id(call) for call in batch}  # the batch holds them: ids stay unique
                while self._waiting and id(self._waiting[0]) in written:
                    self._waiting.popleft()  # rows recorded meanwhile stay, in order

    async def _insert(self, batch: list[_Call], retry: bool) -> None:
        async with self._database.connection(STORE, retry) as connection:
            async with connection.cursor() as cursor:
                await cursor.executemany(
                    "INSERT INTO usage_calls (day, who, model, prompt_tokens, "
                    "completion_tokens, cut) VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (c.day, c.who, c.model, c.prompt_tokens, c.completion_tokens, c.cut)
                        for c in batch
                    ],
                )
