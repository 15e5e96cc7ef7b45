"""Waiting for what proves a test's point, instead of sleeping and hoping it happened."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

POLL_SECONDS = 0.01


async def wait_until(condition: Callable[[], bool], within: float = 5.0, what: str = "") -> None:
    """Return once `condition()` holds; fail the test after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"not within {within:g}s: {what or condition}")
        await asyncio.sleep(POLL_SECONDS)
