"""An MCP server does not decide how big every prompt is: the tools offered stay within bounds,
and names that collide after namespacing are refused."""

from __future__ import annotations

import logging

from mcp_types import Tool

from bot.config.model import McpConfig, McpServerConfig
from bot.conversation.scope import MemoryScope
from bot.mcp.connection import McpServerConnection, ServerState
from bot.mcp.offer import offer
from bot.mcp.servers import McpServers


def server(name: str, tools: list[Tool]) -> McpServerConnection:
    connection = McpServerConnection(name, McpServerConfig(command="true"), {})
    connection.listed = tuple(tools)
    return connection


def tool(name: str, properties: int = 1, description: str = "does a thing") -> Tool:
    schema = {
        "type": "object",
        "properties": {
            f"p{n}": {"type": "string", "description": "x" * 100} for n in range(properties)
        },
    }
    return Tool(name=name, description=description, inputSchema=schema)


def limits(**fields: int) -> McpConfig:
    return McpConfig.model_validate(fields)


def test_a_servers_tools_past_the_count_bound_are_left_out_and_named():
    big = server("big", [tool(f"t{n}") for n in range(205)])
    small = server("small", [tool("search")])
    result = offer([big, small], limits(maxToolsPerServer=10))
    assert [t.name for t in result.tools] == [*(f"big__t{n}" for n in range(10)), "small__search"]
    assert result.trimmed == {"big": "195 over mcp.maxToolsPerServer"}
    assert result.listed == {"big": 205}


def test_a_tool_with_a_huge_schema_is_left_out():
    huge = server("huge", [tool("fine"), tool("essay", properties=200)])  # about 25 KB
    result = offer([huge], limits(maxSchemaKilobytes=8))
    assert [t.name for t in result.tools] == ["huge__fine"]
    assert result.trimmed == {"huge": "1 over mcp.maxSchemaKilobytes"}


def test_a_schema_nested_past_what_json_can_walk_is_left_out():
    nested: dict = {"type": "object"}
    for _ in range(5000):
        nested = {"type": "object", "properties": {"x": nested}}
    deep = server("deep", [Tool(name="deep", inputSchema=nested), tool("fine")])
    result = offer([deep], limits())
    assert [t.name for t in result.tools] == ["deep__fine"]


def test_all_servers_together_stay_within_the_total_and_the_first_listed_keep_theirs():
    first = server("first", [tool(f"a{n}", properties=20) for n in range(4)])  # ~2.5 KB each
    second = server("second", [tool(f"b{n}", properties=20) for n in range(4)])
    result = offer([first, second], limits(maxToolsKilobytes=16))
    offered = [t.name for t in result.tools]
    assert offered[:4] == ["first__a0", "first__a1", "first__a2", "first__a3"]
    assert 4 < len(offered) < 8 and sum(t.size for t in result.tools) <= 16 * 1024
    assert set(result.trimmed) == {"second"}
    assert result.trimmed["second"].endswith("over mcp.maxToolsKilobytes")


def test_names_that_collide_after_namespacing_are_refused_not_shadowed():
    web = server("web", [tool("get.page"), tool("get_page"), tool("search")])
    result = offer([web], limits())
    assert [t.name for t in result.tools] == ["web__search"]
    assert result.trimmed == {"web": "2 whose names collide (web__get_page)"}


def test_the_same_name_from_two_servers_is_refused_in_both():
    one = server("a__b", [tool("c")])  # a__b__c
    two = server("a", [tool("b__c"), tool("d")])  # a__b__c too
    result = offer([one, two], limits())
    assert [t.name for t in result.tools] == ["a__d"]
    assert set(result.trimmed) == {"a__b", "a"}


class ReadyServer(McpServerConnection):
    """A connection that is ready at once with 205 tools, and runs no process."""

    def start(self) -> None:
        self.listed = tuple(tool(f"t{n}") for n in range(205))
        self.generation = 1
        self.state = ServerState("ready", len(self.listed))

    async def stop(self) -> None:
        pass


async def test_the_log_says_once_and_status_names_the_trimmed_server(caplog):
    config = McpConfig.model_validate(
        {"servers": {"big": {"command": "true"}}, "maxToolsPerServer": 3}
    )
    servers = McpServers(lambda: config, {}, connect=ReadyServer)
    await servers.start()
    try:
        with caplog.at_level(logging.WARNING, logger="bot.mcp"):
            for _ in range(3):
                assert len(servers.current_tools()) == 3
        lines = [r.message for r in caplog.records if "left out" in r.message]
        assert lines == ["[MCP] big: tools left out: 202 over mcp.maxToolsPerServer"]
        scope = MemoryScope("1", "1")
        shown = await servers.status_lines(scope)
        assert shown == ["MCP servers: big ready (3 of 205 tools offered)"]
        assert (await servers.operator_status_lines(scope))[1] == (
            "MCP tools left out: big: 202 over mcp.maxToolsPerServer"
        )
    finally:
        await servers.aclose()
