"""Token usage per user per day, on disk: `<data dir>/usage/<YYYY-MM-DD>.jsonl`.

Each LLM call appends one line (`{"who": ..., "model": ..., "in": ..., "out": ...}`, and
`"cut": 1` for an answer stopped at the output token limit; not
fsynced: a `kill -9` keeps what was written, a power cut may lose the last seconds). Today's
totals are kept in memory, read back from today's file at start, and start afresh at
midnight UTC. Older days stay on disk as they are, one small file a day, for operators.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Protocol

from bot.ports.llm import TokenUsage
from bot.storage.atomic import AppendedFile

log = logging.getLogger(__name__)


def utc_today() -> date:
    return datetime.now(UTC).date()


@dataclass
class Tally:
    """Calls and tokens of one user with one model on one day."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cut: int = 0
    """Answers that stopped at the model's output token limit."""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: TokenUsage) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cut += usage.cut

    def merge(self, other: Tally) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cut += other.cut


class UsageRecords(Protocol):
    """What metering and `/usage` need of a ledger (files, or PostgreSQL with `DATABASE_URL`).

    `today` and `today_all` are the user's usage across every process sharing the store, so
    a budget is one budget however many processes serve the user."""

    def record(self, who: str, model: str, usage: TokenUsage) -> None:
        """Count one call; returns at once, whatever the store does."""
        ...

    async def today(self, who: str) -> dict[str, Tally]: ...

    async def today_all(self) -> dict[str, dict[str, Tally]]: ...


class DailyTallies:
    """Today's usage by user and model, in memory; a new day (UTC) starts from zero."""

    def __init__(self, today: Callable[[], date] = utc_today) -> None:
        self._today = today
        self.day = today()
        self._tallies: dict[str, dict[str, Tally]] = {}

    def add(self, who: str, model: str, usage: TokenUsage) -> None:
        self.roll_over()
        self.tally(who, model).add(usage)

    def tally(self, who: str, model: str) -> Tally:
        return self._tallies.setdefault(who, {}).setdefault(model, Tally())

    def today(self, who: str) -> dict[str, Tally]:
        """`who`'s usage today, by model."""
        self.roll_over()
        return dict(self._tallies.get(who, {}))

    def today_all(self) -> dict[str, dict[str, Tally]]:
        """Everyone's usage today, by user and model."""
        self.roll_over()
        return {who: dict(models) for who, models in self._tallies.items()}

    def roll_over(self) -> None:
        day = self._today()
        if day != self.day:
            self.day, self._tallies = day, {}


class UsageLedger:
    """Today's usage by user and model, each call also appended to the day's file."""

    def __init__(self, directory: Path, today: Callable[[], date] = utc_today) -> None:
        self.directory = directory
        self._tallies = DailyTallies(today)
        self._file = AppendedFile(self._path(self._tallies.day))
        self._refused = False
        self._load(self._tallies.day)

    def record(self, who: str, model: str, usage: TokenUsage) -> None:
        """Count one call of `who` with `model`; a disk that refuses costs only the file."""
        self._tallies.add(who, model, usage)
        line: dict[str, str | int] = {"who": who, "model": model, "in": usage.prompt_tokens}
        line["out"] = usage.completion_tokens
        if usage.cut:
            line["cut"] = 1
        try:
            self._file_of(self._tallies.day).append(
                (json.dumps(line) + "\n").encode(), durable=False
            )
            self._refused = False
        except OSError as exc:
            if not self._refused:
                log.error("[Usage] could not write the usage file (%s); counted in memory", exc)
            self._refused = True

    async def today(self, who: str) -> dict[str, Tally]:
        """`who`'s usage today, by model: this process's, since a data dir has one process
        (`DataDirLock`)."""
        return self._tallies.today(who)

    async def today_all(self) -> dict[str, dict[str, Tally]]:
        """Everyone's usage today, by user and model."""
        return self._tallies.today_all()

    def _file_of(self, day: date) -> AppendedFile:
        """The day's file, kept open from one call to the next (a new day closes the last)."""
        path = self._path(day)
        if self._file.path != path:
            self._file.close()
            self._file = AppendedFile(path)
        return self._file

    def _path(self, day: date) -> Path:
        return self.directory / f"{day.isoformat()}.jsonl"

    def _load(self, day: date) -> None:
        try:
            lines = self._path(day).read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.error("[Usage] could not read today's usage (%s); counting from zero", exc)
            return
        for line in lines:
            try:
                entry = json.loads(line)
                usage = TokenUsage(int(entry["in"]), int(entry["out"]), cut=bool(entry.get("cut")))
                who, model = str(entry["who"]), str(entry["model"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a crash
            self._tallies.tally(who, model).add(usage)


def total(tallies: dict[str, Tally]) -> Tally:
    """The sum over models."""
    summed = Tally()
    for tally in tallies.values():
        summed.merge(tally)
    return summed


def by_model(everyone: dict[str, dict[str, Tally]]) -> dict[str, Tally]:
    """Everyone's usage summed per model (so each model is priced at its own rate)."""
    summed: dict[str, Tally] = {}
    for models in everyone.values():
        for model, tally in models.items():
            summed.setdefault(model, Tally()).merge(tally)
    return summed
