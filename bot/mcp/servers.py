"""Every configured MCP server, kept in line with the runtime config, as a source of tools.

The config is compared at each turn (and every few seconds by a watcher), by identity: the
config store hands out the same object until the file changes, so this costs nothing. A
server added or enabled is started, one removed or disabled is stopped, one whose command,
URL, headers or limits changed is restarted; a change of `allowedTools` or `timeoutSeconds`
applies at once, without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config.model import McpConfig, McpServerConfig
from bot.conversation.scope import MemoryScope
from bot.mcp.connection import MCP_BACKOFF, McpServerConnection, ServerState
from bot.mcp.naming import namespaced
from bot.retry import Backoff
from bot.tools.registry import RawTool, ToolContext

log = logging.getLogger(__name__)

MAX_DESCRIPTION_CHARS = 1000
"""A tool's description goes into every prompt: a server's essay is cut here."""
WATCH_SECONDS = 2.0
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

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> str:
        return await self.connection.call(self.remote_name, arguments)


class McpServers:
    """The MCP servers of the runtime config: `start` with the app, `aclose` with it."""

    def __init__(
        self,
        config: Callable[[], McpConfig],
        environ: Mapping[str, str],
        backoff: Backoff = MCP_BACKOFF,
        watch_seconds: float = WATCH_SECONDS,
    ) -> None:
        self._config = config
        self._environ = environ
        self._backoff = backoff
        self._watch_seconds = watch_seconds
        self._applied: McpConfig | None = None
        self._connections: dict[str, McpServerConnection] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._tools: list[RawTool] = []
        self._tools_key: tuple[tuple[int, int, bool, int], ...] = ()

    async def start(self) -> None:
        self.apply()
        self._watcher = asyncio.create_task(self._watch(), name="mcp-config-watch")

    async def aclose(self) -> None:
        """Stop the watcher and every server (child processes get their grace period)."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.stop() for c in connections), *self._stopping)

    def connection(self, name: str) -> McpServerConnection | None:
        return self._connections.get(name)

    def current_tools(self) -> list[RawTool]:
        """The tools of every connected server, filtered by its `allowedTools`; rebuilt only
        when a server connected, went away or had its config changed."""
        if self._watcher is None:
            return []  # not started (or closed): no server runs
        self.apply()
        key = tuple(
            (id(c), c.generation, c.offering, id(c.config)) for c in self._connections.values()
        )
        if key != self._tools_key:
            self._tools_key = key
            self._tools = [
                tool for c in self._connections.values() if c.offering for tool in _tools_of(c)
            ]
        return list(self._tools)

    def apply(self) -> None:
        """Bring the running servers in line with the config (no-op when it is unchanged)."""
        config = self._config()
        if config is self._applied:
            return
        self._applied = config
        wanted = {name: server for name, server in config.servers.items() if server.enabled}
        for name in list(self._connections):
            running = self._connections[name]
            server = wanted.get(name)
            if server is None or _needs_restart(running.config, server):
                self._stop_in_background(self._connections.pop(name))
            else:
                running.config = server  # allowed tools and timeout apply at once
        for name, server in wanted.items():
            if name not in self._connections:
                connection = McpServerConnection(name, server, self._environ, self._backoff)
                self._connections[name] = connection
                connection.start()
                log.info("[MCP] %s: starting", name)

    def states(self) -> dict[str, ServerState | None]:
        """Each configured server's state; None for one turned off (`enabled: false`)."""
        self.apply()
        return {
            name: (c.current_state() if (c := self._connections.get(name)) else None)
            for name in self._config().servers
        }

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        return self._lines(operator=False)

    async def operator_status_lines(self, scope: MemoryScope) -> list[str]:
        return self._lines(operator=True)

    def _lines(self, operator: bool) -> list[str]:
        if self._watcher is None:
            return []
        states = self.states()
        if not states:
            return []
        shown = [f"{name} {_describe_state(state, operator)}" for name, state in states.items()]
        return ["MCP servers: " + "; ".join(shown)]

    def _stop_in_background(self, connection: McpServerConnection) -> None:
        log.info("[MCP] %s: stopping (config changed)", connection.name)
        task = asyncio.create_task(connection.stop(), name=f"mcp-stop-{connection.name}")
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _watch(self) -> None:
        """Applies config edits while no turn runs, so `/status` and tools are current."""
        while True:
            await asyncio.sleep(self._watch_seconds)
            try:
                self.apply()
            except Exception:  # a bug here must not end the watching
                log.exception("[MCP] applying the config failed")


def _tools_of(connection: McpServerConnection) -> list[RawTool]:
    config = connection.config
    tools: list[RawTool] = []
    for listed in connection.listed:
        if not config.offers(listed.name):
            continue
        description = (listed.description or listed.title or listed.name).strip()
        schema = listed.input_schema
        tools.append(
            McpTool(
                namespaced(connection.name, listed.name),
                description[:MAX_DESCRIPTION_CHARS],
                schema if schema.get("type") == "object" else _EMPTY_SCHEMA,
                config.timeout_seconds,
                listed.name,
                connection,
            )
        )
    return tools


def _needs_restart(old: McpServerConfig, new: McpServerConfig) -> bool:
    same_except = {"allowed_tools", "timeout_seconds"}
    return old.model_dump(exclude=same_except) != new.model_dump(exclude=same_except)


def _describe_state(state: ServerState | None, operator: bool) -> str:
    if state is None:
        return "off"
    if state.phase == "ready":
        return f"ready ({state.tools} tools)"
    text = {"starting": "starting", "restarting": "restarting", "failed": "down"}.get(
        state.phase, state.phase
    )
    if state.retry_in_seconds is not None:
        text += f", next try in {state.retry_in_seconds:.0f}s"
    if operator and state.problem:
        text += f" ({state.problem})"
    return text
