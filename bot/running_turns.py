"""The turn each chat is running, so that `/stop` (and `/new`, `/forget all`) can stop it.

A turn's pipeline runs as a task of its own: stopping cancels that task alone (the LLM stream
is closed, tools are cancelled), while the turn around it goes on to record what was said,
reply and save the session. A shutdown, which cancels the whole turn, is told apart: it is no
stop, and the turn is replayed after a restart as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any


class TurnStopped(Exception):
    """The user stopped this turn (`/stop`, `/new`, `/forget all`) before it finished."""


@dataclass
class _Running:
    asked_by: str
    pipeline: asyncio.Task[Any] | None = None
    stop_asked: bool = False
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class RunningTurns:
    """At most one running turn per chat (the chat's lanes see to that), by session key."""

    def __init__(self) -> None:
        self._turns: dict[str, _Running] = {}

    @asynccontextmanager
    async def turn(self, key: str, asked_by: str) -> AsyncIterator[None]:
        """Mark the chat's turn, asked for by user `asked_by`, as running until the block ends
        (its session saved)."""
        running = _Running(asked_by)
        self._turns[key] = running
        try:
            yield
        finally:
            if self._turns.get(key) is running:
                del self._turns[key]
            running.finished.set()

    async def run(self, key: str, pipeline: Coroutine[Any, Any, None]) -> None:
        """Run the turn's pipeline as a stoppable task; raises `TurnStopped` when stopped."""
        running = self._turns.get(key)
        if running is None:  # not inside `turn`: nothing can stop it
            await pipeline
            return
        if running.stop_asked:
            pipeline.close()
            raise TurnStopped
        running.pipeline = asyncio.create_task(pipeline, name=f"turn {key}")
        try:
            await running.pipeline
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if running.stop_asked and (current is None or not current.cancelling()):
                raise TurnStopped from None
            raise

    def is_running(self, key: str) -> bool:
        return key in self._turns

    def asked_by(self, key: str) -> str | None:
        """Who asked for the chat's running turn; None when none runs."""
        running = self._turns.get(key)
        return running.asked_by if running is not None else None

    async def stop(self, key: str) -> bool:
        """Stop the chat's turn and wait until it has saved its session; False when there was
        nothing to stop (no turn, or one whose answer was complete and on its way)."""
        running = self._turns.get(key)
        if running is None:
            return False
        pipeline = running.pipeline
        stopping = pipeline is None or not pipeline.done()
        running.stop_asked = True
        if pipeline is not None:
            pipeline.cancel()
        await running.finished.wait()
        return stopping
