"""MCP servers written in the tests (the SDK's MCPServer), run as real processes over stdio
and streamable HTTP, against the bot's client: tools offered and called, a crash, a flood, a
slow call, a wrong token, and config edits while it runs."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from bot.config import RuntimeConfigStore
from bot.config.model import ToolsConfig
from bot.conversation import MemoryScope, ToolCall
from bot.mcp.servers import McpServers
from bot.retry import Backoff
from bot.tools import ToolContext, ToolRegistry, builtin_tools
from tests.fakes.mcp_server import HttpMcpServer, stdio_entry
from tests.fakes.untrusted import unfenced
from tests.fakes.waiting import wait_until

CTX = ToolContext(user_id="u", session_key="k", memory_scope=MemoryScope("u", "u"))
FAST = Backoff(first_seconds=0.1, longest_seconds=0.5)
TOKEN = "mcp-bearer-token-5f3a9c"
STARTUP = 30.0
"""Seconds a test server may take to start: the SDK's import alone takes a second or two."""


class Harness:
    """The runtime config file, the servers it lists, and a registry offering their tools."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.write({})
        store = RuntimeConfigStore(path)
        environ = {**os.environ, "SEARCH_TOKEN": TOKEN}
        self.mcp = McpServers(lambda: store.current().mcp, environ, FAST, watch_seconds=0.05)
        self.registry = ToolRegistry(builtin_tools())
        self.registry.add_source(self.mcp)

    def write(self, servers: dict[str, Any]) -> None:
        self.path.write_text(json.dumps({"mcp": {"servers": servers}}))

    def names(self) -> list[str]:
        return [spec.name for spec in self.registry.specs(ToolsConfig())]

    async def call(self, name: str, tool_timeout: float = STARTUP, **arguments: Any) -> str:
        """The call's result as the server sent it: the bot's fence taken off."""
        call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
        return unfenced(await self.registry.execute(call, CTX, ToolsConfig(), tool_timeout, 8000))

    async def ready(self, server: str, generation: int = 1) -> None:
        def is_ready() -> bool:
            connection = self.mcp.connection(server)
            return bool(
                connection
                and connection.state.phase == "ready"
                and connection.generation >= generation
            )

        await wait_until(is_ready, STARTUP, f"{server} ready (generation {generation})")

    def phase(self, server: str) -> str | None:
        connection = self.mcp.connection(server)
        return connection.state.phase if connection else None


@pytest.fixture
async def harness(tmp_path):
    built = Harness(tmp_path / "runtime-config.json")
    await built.mcp.start()
    yield built
    await built.mcp.aclose()


async def test_stdio_tools_are_namespaced_and_their_schemas_passed_through(harness):
    harness.write({"search": stdio_entry()})
    await harness.ready("search")
    specs = {spec.name: spec for spec in harness.registry.specs(ToolsConfig())}
    assert {"current_time", "calculator", "search__web_search", "search__picture"} <= set(specs)
    schema = specs["search__web_search"].parameters
    assert schema["required"] == ["query"]
    assert schema["properties"]["max_results"]["default"] == 3
    assert specs["search__web_search"].description == "Search the web and return the top results."

    found = await harness.call("search__web_search", query="sea otters", max_results=2)
    assert found.splitlines() == [
        "1. Sea Otters: result 1 from example.org/1",
        "2. Sea Otters: result 2 from example.org/2",
    ]
    picture = await harness.call("search__picture")
    assert picture.startswith("Sales chart:")
    assert "[image (image/png, 4 KB) not shown: tools return text]" in picture
    refused = await harness.call("search__web_search", max_results=2)
    assert refused.startswith("Error:") and "query" in refused


async def test_a_stdio_server_that_crashes_is_restarted_and_the_next_call_works(harness, tmp_path):
    marker = tmp_path / "crashed"
    harness.write({"fragile": stdio_entry(env={"MCP_CRASH_MARKER": str(marker)})})
    await harness.ready("fragile")
    first = await harness.call("fragile__crash_once")
    assert marker.exists(), "the server process died in the call"
    assert first.startswith("Error: the fragile server stopped answering")
    # The call waits while the server restarts, so the model's retry simply works.
    second = await harness.call("fragile__crash_once")
    assert second.startswith("still standing")
    assert harness.mcp.connection("fragile").generation == 2


async def test_over_http_with_a_bearer_token_from_the_environment(harness, caplog):
    caplog.set_level(logging.DEBUG)
    with HttpMcpServer(token=TOKEN) as server:
        harness.write(
            {
                "web": {"url": server.url, "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}},
                "wrong": {"url": server.url, "headers": {"Authorization": "Bearer nope"}},
            }
        )
        await harness.ready("web")
        assert (await harness.call("web__web_search", query="otters")).startswith("1. Otters")
        await wait_until(lambda: harness.phase("wrong") == "failed", STARTUP, "wrong token")
        assert "wrong__web_search" not in harness.names()
        assert "401" in (harness.mcp.connection("wrong").state.problem or "")
    assert TOKEN not in caplog.text


async def test_an_http_server_that_went_away_is_reconnected_when_it_is_back(harness):
    server = HttpMcpServer()
    with server:
        harness.write({"web": {"url": server.url, "timeoutSeconds": 5}})
        await harness.ready("web")
        server.kill()
        lost = await harness.call("web__web_search", query="anyone?")
        assert lost.startswith("Error: the web server stopped answering")
        # While it is down, a call waits for the reconnection attempt, then hears it failed
        # (rather than waiting out its whole time-out).
        down = await harness.call("web__web_search", query="still down?")
        assert down.startswith("Error: the web server is not available: ConnectError")
        server.start()  # a service manager brings it back on the same port
        await harness.ready("web", generation=2)
        back = await harness.call("web__web_search", query="back again")
        assert back.startswith("1. Back Again")


async def test_a_flood_is_cut_at_the_cap_and_the_server_keeps_serving(harness):
    with HttpMcpServer(json_response=True) as server:
        harness.write(
            {
                "piped": stdio_entry(maxResponseKilobytes=64),
                "web": {"url": server.url, "maxResponseKilobytes": 64},
            }
        )
        await harness.ready("piped")
        await harness.ready("web")
        over_http = await harness.call("web__flood", kilobytes=4096)
        assert over_http.startswith("Error:") and "65,536 bytes" in over_http
        assert harness.mcp.connection("web").generation == 1, "one refused answer, same session"
        over_stdio = await harness.call("piped__flood", kilobytes=4096)
        assert over_stdio.startswith("Error: the piped server stopped answering")
        piped = harness.mcp.connection("piped")
        await wait_until(lambda: piped.last_problem is not None, 10, "the cut is noted")
        assert "sent a message over 65,536 bytes" in (piped.last_problem or "")
        assert (await harness.call("web__web_search", query="ok")).startswith("1. Ok")
        assert (await harness.call("piped__web_search", query="ok")).startswith("1. Ok")


async def test_a_server_flooding_stdout_without_end_is_cut_off_not_buffered(harness):
    harness.write({"hostile": stdio_entry("flood-stdout", maxResponseKilobytes=64)})
    await wait_until(lambda: harness.phase("hostile") == "failed", STARTUP, "cut off")
    problem = harness.mcp.connection("hostile").state.problem or ""
    assert "sent a message over 65,536 bytes; disconnected" in problem
    assert not [name for name in harness.names() if name.startswith("hostile__")]


async def test_a_slow_call_times_out_at_the_server_timeout_and_the_server_stays(harness):
    harness.write({"slowpoke": stdio_entry(timeoutSeconds=1)})
    await harness.ready("slowpoke")
    pid_before = harness.mcp.connection("slowpoke").generation
    late = await harness.call("slowpoke__slow", tool_timeout=600, seconds=60)
    assert late == "Error: slowpoke__slow timed out after 1 seconds."
    assert (await harness.call("slowpoke__web_search", query="now")).startswith("1. Now")
    assert harness.mcp.connection("slowpoke").generation == pid_before


async def test_config_edits_apply_while_running(harness):
    harness.write({"search": stdio_entry(allowedTools=["web_search"])})
    await harness.ready("search")
    running = harness.mcp.connection("search")
    assert [n for n in harness.names() if n.startswith("search__")] == ["search__web_search"]
    assert (await harness.call("search__flood", kilobytes=1)).startswith("Error: unknown tool")

    harness.write({"search": stdio_entry(allowedTools=["web_search", "picture"])})
    await wait_until(lambda: "search__picture" in harness.names(), 5, "picture offered")
    assert harness.mcp.connection("search") is running, "allowed tools change without restart"

    harness.write({"search": stdio_entry(enabled=False), "other": stdio_entry()})
    await harness.ready("other")
    assert not [n for n in harness.names() if n.startswith("search__")]
    await wait_until(lambda: running.state.phase == "stopped", 10, "search stopped")
    assert harness.mcp.states()["search"] is None

    harness.write({})
    await wait_until(lambda: harness.mcp.connection("other") is None, 5, "other removed")
    assert not [n for n in harness.names() if "__" in n]


async def test_a_server_that_cannot_start_says_why_and_costs_nothing_else(harness):
    harness.write(
        {
            "missing": {"command": "/nonexistent/mcp-server-binary"},
            "needs_key": stdio_entry(env={"API_KEY": "${NOT_SET_ANYWHERE_1234}"}),
            "silent": {"command": "sleep", "args": ["600"], "startTimeoutSeconds": 1},
            "search": stdio_entry(),
        }
    )
    await harness.ready("search")
    await wait_until(lambda: harness.phase("missing") == "failed", STARTUP, "missing failed")
    await wait_until(lambda: harness.phase("needs_key") == "failed", STARTUP, "key failed")
    await wait_until(lambda: harness.phase("silent") == "failed", STARTUP, "silent failed")
    assert harness.mcp.connection("silent").state.problem == "did not start within 1s"
    assert "not found" in (harness.mcp.connection("missing").state.problem or "")
    assert (
        harness.mcp.connection("needs_key").state.problem
        == "the environment variable NOT_SET_ANYWHERE_1234 is not set"
    )
    lines = await harness.mcp.operator_status_lines(CTX.memory_scope)
    assert lines[0].startswith("MCP servers: missing down, next try in")
    assert "search ready (5 tools)" in lines[0]
    assert (await harness.call("calculator", expression="2+2")) == "2+2 = 4"
    assert "/nonexistent" not in " ".join(await harness.mcp.status_lines(CTX.memory_scope))
