"""The bounded stdio transport against servers that write without pause: notifications are
dropped before validation, stderr keeps its last lines."""

import json
import sys

import anyio
import pytest

from bot.mcp.stdio import StdioLaunch, TransportWatch, bounded_stdio
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.integration

FLOODER = r"""
import json, sys
kind, count = sys.argv[1], int(sys.argv[2])
if kind == "stderr":
    sys.stderr.write("noise\n" * count + "last words\n")
    sys.stderr.flush()
else:
    params = {"level": "info", "data": {"id": 7, "text": "spam"}}
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
    sys.stdout.write((json.dumps(note) + "\n") * count)
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}) + "\n")
sys.stdout.flush()
sys.stdin.read()
"""


async def first_message(kind: str, count: int) -> tuple[object, TransportWatch]:
    """What the session gets first from a server writing `count` lines of `kind` first, once
    its stderr tail holds its last line."""
    watch = TransportWatch(on_end=lambda: None)
    launch = StdioLaunch(sys.executable, ["-c", FLOODER, kind, str(count)], {})
    with anyio.fail_after(60):
        async with bounded_stdio(launch, 1_000_000, watch) as (from_server, _):
            message = await from_server.receive()
            if kind == "stderr":
                await wait_until(lambda: "last words" in watch.stderr_tail, 30)
            return message, watch


async def test_notifications_are_dropped_before_they_reach_the_session():
    message, watch = await first_message("notifications", 50_000)
    assert json.loads(message.message.model_dump_json()) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    assert watch.notifications_dropped == 50_000


async def test_a_stderr_flood_leaves_only_its_last_lines():
    message, watch = await first_message("stderr", 500_000)
    assert not isinstance(message, Exception)
    assert list(watch.stderr_tail)[-2:] == ["noise", "last words"]
