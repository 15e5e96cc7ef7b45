"""One row per figure, so every benchmark reports the same way."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """A measured figure, its target, and whether it meets it."""

    benchmark: str
    name: str
    value: float
    unit: str
    target: str
    met: bool | None = None

    @classmethod
    def failure(cls, benchmark: str, reason: str) -> Figure:
        """The row of a benchmark that did not finish: why, in place of its figures."""
        return cls(benchmark, f"did not finish: {reason}", math.nan, "", "", False)

    @property
    def failed(self) -> bool:
        return math.isnan(self.value)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values)


def print_table(figures: list[Figure]) -> None:
    rows = [("benchmark", "figure", "value", "target", "")]
    for f in figures:
        verdict = "" if f.met is None else ("ok" if f.met else "MISSED")
        value = f"{f.value:.3f} {f.unit}".strip()
        if f.failed:
            verdict, value = "FAILED", "-"
        rows.append((f.benchmark, f.name, value, f.target, verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
