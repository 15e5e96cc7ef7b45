"""Which MCP tools the model is offered: namespaced, each name once, within the config's bounds.

Every offered tool's name, description and schema go into every LLM request, so a server
must not decide how big the prompt is: a server's tools past `mcp.maxToolsPerServer`, a tool
whose schema is over `mcp.maxSchemaKilobytes`, and every tool past `mcp.maxToolsKilobytes`
of all servers' tools together (servers in the order the config lists them) are left out.
Two tools whose names are the same after namespacing are both refused: the model could not
tell which one it calls. What was left out is said per server, for the log and `/status`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.config.model import McpConfig
from bot.mcp.naming import namespaced
from bot.tools.registry import ToolContext

if TYPE_CHECKING:
    from bot.mcp.connection import McpServerConnection

MAX_DESCRIPTION_CHARS = 1000
"""A tool's description goes into every prompt: a server's essay is cut here."""
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class McpTool:
    """One server tool as the registry sees it: namespaced, its schema passed through."""

    name: str
    description: str
    parameters: dict[str, Any]
    timeout_seconds: float | None
    remote_name: str
    connection: McpServerConnection
    size: int = 0
    """Its name, description and schema as JSON, in bytes: what it adds to every request."""
    schema_size: int = 0
    """Its schema as JSON, in bytes."""

    @property
    def in_groups(self) -> bool:
        """Its server's `inGroups`: offered in groups and guest chats too."""
        return self.connection.config.in_groups

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> str:
        return await self.connection.call(self.remote_name, arguments)


@dataclass
class Offer:
    """The tools to offer, and per server what was left out (one line each)."""

    tools: list[McpTool] = field(default_factory=list)
    trimmed: dict[str, str] = field(default_factory=dict)
    listed: dict[str, int] = field(default_factory=dict)
    """How many tools each trimmed server listed (after its `allowedTools`)."""


def offer(connections: Sequence[McpServerConnection], config: McpConfig) -> Offer:
    """The tools of `connections` (in config order) within `config`'s bounds."""
    candidates = [_tools_of(c) for c in connections]
    names = Counter(tool.name for tools in candidates for tool in tools)
    result = Offer()
    room = config.max_tools_kilobytes * 1024
    for connection, tools in zip(connections, candidates, strict=True):
        fitting, left_out = _within_server_bounds(tools, names, config)
        kept = 0
        for tool in fitting:
            if tool.size > room:
                break
            room -= tool.size
            kept += 1
        if kept < len(fitting):
            left_out.append(f"{len(fitting) - kept} over mcp.maxToolsKilobytes")
        result.tools += fitting[:kept]
        if left_out:
            result.trimmed[connection.name] = "; ".join(left_out)
            result.listed[connection.name] = len(tools)
    return result


def _within_server_bounds(
    tools: list[McpTool], names: Counter[str], config: McpConfig
) -> tuple[list[McpTool], list[str]]:
    """One server's tools without collisions, huge schemas and those past its count; and
    what was left out, why."""
    left_out: list[str] = []
    collided = [t for t in tools if names[t.name] > 1]
    if collided:
        shown = ", ".join(sorted({t.name for t in collided}))
        left_out.append(f"{len(collided)} whose names collide ({shown[:200]})")
    schema_bytes = config.max_schema_kilobytes * 1024
    unique = [t for t in tools if names[t.name] == 1]
    fitting = [t for t in unique if t.schema_size <= schema_bytes]
    if len(fitting) < len(unique):
        left_out.append(f"{len(unique) - len(fitting)} over mcp.maxSchemaKilobytes")
    if len(fitting) > config.max_tools_per_server:
        left_out.append(f"{len(fitting) - config.max_tools_per_server} over mcp.maxToolsPerServer")
        fitting = fitting[: config.max_tools_per_server]
    return fitting, left_out


def _tools_of(connection: McpServerConnection) -> list[McpTool]:
    config = connection.config
    tools: list[McpTool] = []
    for listed in connection.listed:
        if not config.offers(listed.name):
            continue
        description = (listed.description or listed.title or listed.name).strip()
        description = description[:MAX_DESCRIPTION_CHARS]
        schema = listed.input_schema if listed.input_schema.get("type") == "object" else None
        schema = schema or _EMPTY_SCHEMA
        name = namespaced(connection.name, listed.name)
        schema_size = _json_size(schema)
        size = len(name) + len(description.encode()) + schema_size
        tools.append(
            McpTool(
                name,
                description,
                schema,
                config.timeout_seconds,
                listed.name,
                connection,
                size,
                schema_size,
            )
        )
    return tools


def _json_size(schema: dict[str, Any]) -> int:
    """`schema` as JSON, in bytes; one nested past what JSON encoding can walk counts as
    endless (it is left out, where it would have broken every request)."""
    try:
        return len(json.dumps(schema).encode())
    except (RecursionError, ValueError, TypeError):
        return 2**62
