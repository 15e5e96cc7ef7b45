"""Token usage in PostgreSQL: one row per LLM call in `usage_calls`, the day's totals read
back at start. The same promises as the day files (`bot/usage/ledger.py`).

`record` is called on every LLM call and must return at once: it counts in memory (what the
budgets and `/usage` read) and hands the row to one background writer, which sends what has
piled up in one round trip. Rows the database refuses wait in memory (up to `max_unwritten`,
the oldest dropped first, with a log line) and go with the next write or retry.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
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
        self._dropping = False
        database.health.add_backlog(self)

    async def load(self) -> None:
        """Today's totals so far (an earlier run's); from zero, with a log line, when the
        database cannot say."""
        day = self._tallies.day
        try:
            async with self._database.connection(STORE) as connection:
                cursor = await connection.execute(
                    "SELECT who, model, count(*), sum(prompt_tokens), sum(completion_tokens), "
                    "count(*) FILTER (WHERE cut) "
                    "FROM usage_calls WHERE day = %s GROUP BY who, model",
                    (day,),
                )
                rows = await cursor.fetchall()
        except DatabaseDown:
            log.error("[Usage] could not read today's usage; counting from zero")
            return
        for who, model, calls, prompt, completion, cut in rows:
            tally = self._tallies.tally(who, model)
            tally.merge(Tally(int(calls), int(prompt), int(completion), int(cut)))

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

    def today(self, who: str) -> dict[str, Tally]:
        return self._tallies.today(who)

    def today_all(self) -> dict[str, dict[str, Tally]]:
        return self._tallies.today_all()

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
            batch = list(self._waiting)
            try:
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
            except DatabaseDown:
                return  # they wait for the next record or retry
            self._dropping = False
            written = {id(call) for call in batch}  # the batch holds them: ids stay unique
            while self._waiting and id(self._waiting[0]) in written:
                self._waiting.popleft()  # rows recorded meanwhile stay, in order
