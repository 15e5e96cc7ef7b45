"""Reading Prometheus' text format in tests."""

from __future__ import annotations

import re


def sample(metrics: str, name: str, **labels: str) -> float:
    """The value of the first series `name` whose labels include `labels`; 0 when absent."""
    for line in metrics.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        series, value = line.rsplit(" ", 1)
        found = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if series.split("{", 1)[0] == name and all(found.get(k) == v for k, v in labels.items()):
            return float(value)
    return 0.0
