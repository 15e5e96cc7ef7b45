"""Fixtures the unit tests share: hand-moved clocks, short-term memory and the remember switch."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.remember_switch import RememberSwitch
from bot.memory.service import MemoryService
from tests.fakes.clock import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """A wall clock at 2026-03-01 12:00 UTC, moved by hand (`clock.now += timedelta(...)`)."""
    return FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
def timer() -> FakeClock:
    """A monotonic clock in seconds, moved by hand."""
    return FakeClock()


@pytest.fixture
def memory(tmp_path, clock) -> MemoryService:
    """Short-term memory over files in `tmp_path / "memory"`, with the default config and
    `clock`'s time."""
    return file_memory(tmp_path / "memory", MemoryConfig, clock)


@pytest.fixture
def switch(tmp_path) -> RememberSwitch:
    """The `/remember` switch, in the memory folder as the app keeps it."""
    return RememberSwitch(tmp_path / "memory" / "remember-off.json")
