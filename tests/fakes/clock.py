"""A clock that tests move by hand, for every component that takes one (`clock=`, `timer=`)."""

from __future__ import annotations

from datetime import datetime, timedelta


class FakeClock:
    """Call it for the time; set `now` or `advance` it. Monotonic seconds by default, or a
    `datetime` when started at one (a wall clock)."""

    def __init__(self, now: float | datetime = 1000.0) -> None:
        self.now = now

    def __call__(self):  # float or datetime, as started
        return self.now

    def advance(self, seconds: float) -> None:
        if isinstance(self.now, datetime):
            self.now += timedelta(seconds=seconds)
        else:
            self.now += seconds
