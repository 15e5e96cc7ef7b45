"""Every configured MCP server, kept in line with the runtime config, as a source of tools.

The config is compared at each turn (and every few seconds by a watcher), by identity: the
config store hands out the same object until the file changes, so this costs nothing. A
server added or enabled is started, one removed or disabled is stopped, one whose command,
URL, headers or limits changed is restarted; a change of `allowedTools`, `timeoutSeconds` or
`inGroups` applies at once, without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from bot.config.model import McpConfig, McpServerConfig
from bot.conversation.scope import MemoryScope
from bot.mcp.offer import Offer, offer
from bot.mcp.state import MCP_BACKOFF, ServerState
from bot.retry import Backoff
from bot.tools.registry import RawTool

if TYPE_CHECKING:
    from bot.mcp.connection import McpServerConnection

log = logging.getLogger(__name__)

WATCH_SECONDS = 2.0


class McpServers:
    """The MCP servers of the runtime config: `start` with the app, `aclose` with it."""

    def __init__(
        self,
        config: Callable[[], McpConfig],
        environ: Mapping[str, str],
        backoff: Backoff = MCP_BACKOFF,
        watch_seconds: float = WATCH_SECONDS,
        connect: Callable[..., McpServerConnection] | None = None,
    ) -> None:
        """`connect(name, server config, environ, backoff)` makes a server's connection;
        tests hand in one that needs no process."""
        self._connect = connect or _sdk_connection
        self._config = config
        self._environ = environ
        self._backoff = backoff
        self._watch_seconds = watch_seconds
        self._applied: McpConfig | None = None
        self._connections: dict[str, McpServerConnection] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._offer = Offer()
        self._offer_key: tuple[object, ...] = ()

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
        """The tools of every connected server, filtered by its `allowedTools`, within the
        bounds of `bot/mcp/offer.py`; rebuilt only when a server connected, went away or had
        its config changed, and then each trimmed server is logged once."""
        if self._watcher is None:
            return []  # not started (or closed): no server runs
        self.apply()
        config = self._config()
        offering = [c for name in config.servers if (c := self._connections.get(name))]
        key = (id(config), *((id(c), c.generation, c.offering, id(c.config)) for c in offering))
        if key != self._offer_key:
            self._offer_key = key
            self._offer = offer([c for c in offering if c.offering], config)
            for name, what in self._offer.trimmed.items():
                log.warning("[MCP] %s: tools left out: %s", name, what)
        return list(self._offer.tools)

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
                running.config = server  # allowed tools, timeout, in groups: at once
        for name, server in wanted.items():
            if name not in self._connections:
                connection = self._connect(name, server, self._environ, self._backoff)
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
        self.current_tools()  # what is offered now, and what was left out
        shown = [
            f"{name} {_describe_state(state, operator, self._offered(name))}"
            for name, state in states.items()
        ]
        lines = ["MCP servers: " + "; ".join(shown)]
        if operator and self._offer.trimmed:
            trims = (f"{name}: {what}" for name, what in self._offer.trimmed.items())
            lines.append("MCP tools left out: " + "; ".join(trims))
        return lines

    def _offered(self, name: str) -> str | None:
        """`12 of 205 tools` for a server some of whose tools are left out; else None."""
        listed = self._offer.listed.get(name)
        if listed is None:
            return None
        count = sum(1 for t in self._offer.tools if t.connection.name == name)
        return f"{count} of {listed} tools offered"

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


def _needs_restart(old: McpServerConfig, new: McpServerConfig) -> bool:
    same_except = {"allowed_tools", "timeout_seconds", "in_groups"}
    return old.model_dump(exclude=same_except) != new.model_dump(exclude=same_except)


def _describe_state(state: ServerState | None, operator: bool, offered: str | None) -> str:
    if state is None:
        return "off"
    if state.phase == "ready":
        return f"ready ({offered or f'{state.tools} tools'})"
    text = {"starting": "starting", "restarting": "restarting", "failed": "down"}.get(
        state.phase, state.phase
    )
    if state.retry_in_seconds is not None:
        text += f", next try in {state.retry_in_seconds:.0f}s"
    if operator and state.problem:
        text += f" ({state.problem})"
    return text


def _sdk_connection(
    name: str, config: McpServerConfig, environ: Mapping[str, str], backoff: Backoff
) -> McpServerConnection:
    """A server's connection through the MCP SDK, imported here, with the first server: a bot
    with no server configured never loads it (`bot/mcp/state.py`)."""
    from bot.mcp.connection import McpServerConnection

    return McpServerConnection(name, config, environ, backoff)
