"""An MCP server run as a child process, spoken to over stdin/stdout, with bounded reads.

The SDK's own stdio transport keeps a line until its newline arrives, however long: a server
writing without end would grow the bot's memory without bound. This one refuses a message
longer than `max_message_bytes` and ends the connection (the server is then restarted with
back-off); it keeps only the last lines of the server's stderr, for the log; and it stops the
server as the MCP spec says (stdin closed, a grace period, then the whole process group).

A server can write without pause, so what it costs to read is kept near the cost of the
pipe itself: of each chunk of stderr only its last lines are looked at (`rsplit` from the
end), and a notification (a message without an `id`; the bot asks for none and acts on none)
is counted and dropped after `json.loads`, never validated or passed to the session.
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

log = logging.getLogger(__name__)

GRACE_SECONDS = 2.0
"""How long a server may take to exit after its stdin closes, before it is terminated."""
_READ_CHUNK = 65_536
_STDERR_LINES = 20
_STDERR_LINE_CHARS = 300


class MessageTooLarge(Exception):
    """The server sent a message longer than its `maxResponseKilobytes`."""


@dataclass
class StdioLaunch:
    """How to start one server: the program, its arguments, its environment and folder."""

    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None = None


@dataclass
class TransportWatch:
    """What a transport saw, for the connection's log lines and restart decision."""

    on_end: Callable[[], None]
    """Called when the server's stdout ends: it exited, crashed, or was cut off."""
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=_STDERR_LINES))
    problem: str | None = None
    notifications_dropped: int = 0
    http_refusal: int | None = None
    """The last HTTP error status the server answered (the SDK reports only "an error")."""


Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@asynccontextmanager
async def bounded_stdio(
    launch: StdioLaunch, max_message_bytes: int, watch: TransportWatch
) -> AsyncIterator[Streams]:
    """The SDK's transport shape (read and write streams of JSON-RPC messages) over a child."""
    process = await anyio.open_process(
        [launch.command, *launch.args],
        env=launch.env,
        cwd=launch.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so the whole tree can be stopped
    )
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read_stdout, process, to_session, max_message_bytes, watch)
        tasks.start_soon(_write_stdin, process, from_session)
        tasks.start_soon(_keep_stderr_tail, process, watch)
        try:
            yield from_server, to_server
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled caller must not leak the child
                to_server.close()
                from_server.close()
                await _stop(process)
            tasks.cancel_scope.cancel()


async def _read_stdout(
    process: anyio.abc.Process,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    max_message_bytes: int,
    watch: TransportWatch,
) -> None:
    assert process.stdout is not None
    pending = bytearray()
    try:
        async with to_session:
            while True:
                try:
                    chunk = await process.stdout.receive(_READ_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                pending += chunk
                *lines, rest = pending.split(b"\n")
                pending = bytearray(rest)
                if len(pending) > max_message_bytes or any(
                    len(line) > max_message_bytes for line in lines
                ):
                    raise MessageTooLarge(f"a message over {max_message_bytes:,} bytes")
                for line in lines:
                    if not line.strip():
                        continue
                    message = _parse(bytes(line))
                    if message is None:
                        watch.notifications_dropped += 1
                    else:
                        await to_session.send(message)
    except MessageTooLarge as exc:
        watch.problem = f"sent {exc}; disconnected"
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the session is gone: we are shutting down
    finally:
        watch.on_end()


def _parse(line: bytes) -> SessionMessage | Exception | None:
    """The message on `line`, the error that made it unreadable, or None for a notification
    (checked on `json.loads`' dict, in C, before pydantic's validation)."""
    try:
        found = json.loads(line)
        if isinstance(found, dict) and "method" in found and "id" not in found:
            return None
        return SessionMessage(jsonrpc_message_adapter.validate_python(found, by_name=False))
    except (ValidationError, ValueError) as exc:
        return exc  # the session logs it and goes on, as with the SDK's transport


async def _write_stdin(
    process: anyio.abc.Process, from_session: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    assert process.stdin is not None
    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with from_session:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(data.encode() + b"\n")


async def _keep_stderr_tail(process: anyio.abc.Process, watch: TransportWatch) -> None:
    """Read stderr to its end (a full pipe would stall the server), keeping the last lines."""
    assert process.stderr is not None
    partial = b""
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        while True:
            chunk = await process.stderr.receive(_READ_CHUNK)
            # only the last lines can stay in the tail: the rest of the chunk is never split
            *lines, partial = (partial + chunk).rsplit(b"\n", _STDERR_LINES + 1)
            partial = partial[-_STDERR_LINE_CHARS:]
            for line in lines[-_STDERR_LINES:]:
                text = line.decode("utf-8", "replace").strip()
                if text:
                    watch.stderr_tail.append(text[:_STDERR_LINE_CHARS])


async def _stop(process: anyio.abc.Process) -> None:
    """stdin closed, `GRACE_SECONDS` to exit, then SIGTERM and SIGKILL to its process group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(GRACE_SECONDS):
        # Polled: `wait()` also waits for the pipes to close, which a grandchild may hold.
        while process.returncode is None:  # noqa: ASYNC110
            await anyio.sleep(0.02)
    if process.returncode is None:
        await terminate_posix_process_tree(process, GRACE_SECONDS)
    with anyio.move_on_after(GRACE_SECONDS):
        await process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await pipe.aclose()
    # asyncio's subprocess transport stays open (and warns when collected) while a grandchild
    # holds a pipe; nothing public closes it, so as the SDK's own transport does:
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    if transport is not None:
        with suppress(PermissionError):
            transport.close()
