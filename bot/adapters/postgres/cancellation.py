"""A cancellation that psycopg_pool's wait for a connection swallowed, raised again.

Under Python 3.11 `asyncio.wait_for` returns the awaited answer instead of raising when a
cancellation arrives together with it (3.12 rebuilt it on `asyncio.timeout`, which does not),
and psycopg_pool waits for a connection with it. A task cancelled at that moment went on with
the connection as if it had never been asked to stop: a loop stopped by cancelling its task
(the reminders' scheduler, the choices' refresh, the inbox workers) ran on, and the shutdown
waiting for it hung. The task still counts the request (`asyncio.Task.cancelling`), so one
that came while the connection was awaited is raised as soon as the connection is had.
"""

from __future__ import annotations

import asyncio


def cancel_requests() -> int:
    """How many cancellations the current task has been asked for and not yet taken back."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def raise_if_cancelled_since(before: int) -> None:
    """Raise `CancelledError` when the current task was asked to stop since `before`
    (`cancel_requests()`) and the wait in between returned instead of raising."""
    if cancel_requests() > before:
        raise asyncio.CancelledError
