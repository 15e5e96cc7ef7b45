"""One MCP server, kept connected: started, its tools listed, restarted when it dies.

Each server has its own task (the SDK's client must be entered and left in one task); turns
call its tools from theirs. A server that fails to start or dies is tried again after the
background back-off of `bot/retry.py`, for as long as it stays in the config, and meanwhile
its tools are not offered; the bot answers regardless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from bot import __version__
from bot.config.model import McpServerConfig
from bot.logging_setup import redact_also
from bot.mcp.http import mcp_http_client
from bot.mcp.results import result_text
from bot.mcp.state import MCP_BACKOFF, Phase, ServerState
from bot.mcp.stdio import StdioLaunch, TransportWatch, bounded_stdio
from bot.retry import Backoff

log = logging.getLogger(__name__)

MAX_TOOL_PAGES = 20
MAX_TOOLS = 200
"""Of one server: a server listing more offers only the first ones."""
STOP_SECONDS = 10.0
_BACKSTOP_SECONDS = 600.0
"""The SDK's own bound on a request; a tool call is bounded sooner, by its `timeoutSeconds`
(the registry's), which an edit changes without a restart."""
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

_HTTP_HINTS = {
    401: " (unauthorised: check the token in headers)",
    403: " (forbidden: check the token in headers)",
    404: " (not found: check the url)",
}


class ConnectionLost(Exception):
    """The server went away during a call; it is being restarted."""


class Unavailable(Exception):
    """The server is not running now; the message says why, for the model and the user."""


class McpServerConnection:
    """The client side of one configured server. `start` once, `stop` once."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        environ: Mapping[str, str],
        backoff: Backoff = MCP_BACKOFF,
    ) -> None:
        self.name = name
        self.config = config
        self._environ = environ
        self._backoff = backoff
        self._client: Client | None = None
        self.listed: tuple[mcp_types.Tool, ...] = ()
        self.state = ServerState("starting")
        self._changed = asyncio.Event()
        """Set and replaced at each change of `state`: what waiting calls wait for."""
        self._wake = asyncio.Event()
        self._stopping = False
        self._secrets: list[str] = []
        self._retry_at: float | None = None
        self._task: asyncio.Task[None] | None = None
        self.generation = 0
        """How many times it became ready: a restart shows as a new generation."""
        self.last_problem: str | None = None
        """Why it last failed or went away, kept after it is back (operators see it)."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.name}")

    async def stop(self) -> None:
        """Disconnect and stop the server (a child process gets its grace period)."""
        self._stopping = True
        self._wake.set()
        if self._task is None:
            return
        if self._client is None:  # starting or resting: nothing to finish, stop it now
            self._task.cancel()
        done, _ = await asyncio.wait({self._task}, timeout=STOP_SECONDS)
        if not done:
            self._task.cancel()
            await asyncio.wait({self._task})
        self._set_state(ServerState("stopped"))

    @property
    def offering(self) -> bool:
        """Whether its tools are offered: connected, or restarting after a crash."""
        return self.state.phase in ("ready", "restarting")

    def current_state(self) -> ServerState:
        if self._retry_at is None or self.state.phase not in ("restarting", "failed"):
            return self.state
        left = max(0.0, self._retry_at - time.monotonic())
        return ServerState(self.state.phase, self.state.tools, self.state.problem, left)

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The tool's result as text for the model; an `Error: ...` text when it failed."""
        try:
            client = await self._connected()
        except Unavailable as exc:
            return f"Error: {exc}"
        generation = self.generation
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as exc:
            if _connection_gone(exc):
                return self._lost(exc.message, generation)
            return f"Error: the {self.name} server refused the call: {self._masked(exc.message)}"
        except ValidationError:
            log.warning("[MCP] %s: %s returned a malformed result", self.name, tool)
            return f"Error: the {self.name} server returned a malformed result."
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            return self._lost(str(exc) or type(exc).__name__, generation)
        return result_text(result)

    async def _connected(self) -> Client:
        """The live client; waits while the server is (re)starting, which the call's own
        time-out bounds."""
        while True:
            if self._client is not None and self.state.phase == "ready":
                return self._client
            if self.state.phase in ("failed", "stopped"):
                why = f": {self.state.problem}" if self.state.problem else ""
                raise Unavailable(f"the {self.name} server is not available{why}")
            await self._changed.wait()

    def _went_away(self) -> None:
        """The connection ended: calls from now on wait for the restart, not on a dead client."""
        if self.state.phase == "ready":
            self._client = None
            self._set_state(ServerState("restarting", len(self.listed)))
        self._wake.set()

    def _set_state(self, state: ServerState) -> None:
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()

    def _lost(self, detail: str, generation: int) -> str:
        log.warning("[MCP] %s: connection lost during a call (%s)", self.name, self._masked(detail))
        if generation == self.generation:  # not a late word about a connection since replaced
            self._went_away()
        return (
            f"Error: the {self.name} server stopped answering during the call; it is being "
            "restarted, so trying again shortly may work."
        )

    async def _run(self) -> None:
        failures = 0
        while not self._stopping:
            watch = TransportWatch(on_end=self._went_away)
            try:
                was_ready = await self._serve_once(watch)
                problem = watch.problem or "the server went away" + self._tail(watch)
            except Exception as exc:  # any failure to start: the bot goes on without it
                was_ready, problem = False, self._masked(_describe(exc))
            if self._stopping:
                break
            failures = 1 if was_ready else failures + 1
            rest = self._backoff.after(failures)
            self._retry_at = time.monotonic() + rest
            if not was_ready:
                self.listed = ()
            phase: Phase = "restarting" if was_ready else "failed"
            self._set_state(ServerState(phase, len(self.listed), problem))
            self.last_problem = problem
            log.warning("[MCP] %s: %s; trying again in %.1fs", self.name, problem, rest)
            self._wake.clear()
            if self._stopping:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), rest)
        self._set_state(ServerState("stopped"))  # waiting calls wake up and see it

    async def _serve_once(self, watch: TransportWatch) -> bool:
        """Connect, list the tools, and serve calls until the connection ends or `stop`.
        Returns True once it has been ready; raises what kept it from getting there."""
        transport = self._transport(watch)
        timeout = self.config.start_timeout_seconds
        if self.state.phase != "restarting":  # a restart keeps offering the tools meanwhile
            self._set_state(ServerState("starting", len(self.listed)))
        became_ready = False
        try:
            async with asyncio.timeout(timeout) as startup:
                async with Client(
                    transport,
                    read_timeout_seconds=_BACKSTOP_SECONDS,
                    client_info=mcp_types.Implementation(name="memory-bot", version=__version__),
                    cache=None,
                ) as client:
                    self.listed = await _list_tools(client)
                    startup.reschedule(None)  # started: from here on only `stop` ends it
                    became_ready = True
                    self._became_ready(client)
                    await self._wake.wait()
                    self._client = None
        except Exception as exc:
            if not became_ready:
                if isinstance(exc, TimeoutError):
                    why = f"did not start within {timeout:g}s{self._tail(watch)}"
                    raise _StartFailed(why) from None
                why = watch.problem or _describe(exc)
                if watch.http_refusal is not None:
                    why = f"HTTP {watch.http_refusal}{_HTTP_HINTS.get(watch.http_refusal, '')}"
                raise _StartFailed(f"{why}{self._tail(watch)}") from exc
            log.debug("[MCP] %s: closing the connection failed: %s", self.name, exc)
        finally:
            self._client = None
        return became_ready

    def _became_ready(self, client: Client) -> None:
        self._client = client
        self._wake.clear()
        self.generation += 1
        self._set_state(ServerState("ready", len(self.listed)))
        log.info("[MCP] %s: ready, %d tools", self.name, len(self.listed))

    def _transport(self, watch: TransportWatch) -> Any:
        config = self.config
        max_bytes = config.max_response_kilobytes * 1024
        self._secrets = []
        if config.url:
            headers = {key: self._expand(value) for key, value in config.headers.items()}

            def refused(status: int) -> None:
                watch.http_refusal = status

            client = mcp_http_client(headers, config.timeout_seconds, max_bytes, refused)
            return _OwningHttpTransport(self._expand(config.url), client, max_bytes)
        env = get_default_environment() | {k: self._expand(v) for k, v in config.env.items()}
        launch = StdioLaunch(
            self._expand(config.command),
            [self._expand(arg) for arg in config.args],
            env,
            config.cwd or None,
        )
        return bounded_stdio(launch, max_bytes, watch)

    def _expand(self, text: str) -> str:
        """`${NAME}` replaced by the environment variable; the value is kept to be masked."""

        def value(match: re.Match[str]) -> str:
            found = self._environ.get(match[1])
            if found is None:
                raise _StartFailed(f"the environment variable {match[1]} is not set")
            if len(found) >= 4:
                self._secrets.append(found)
                redact_also([found])
            return found

        return _PLACEHOLDER.sub(value, text)

    def _masked(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _tail(self, watch: TransportWatch) -> str:
        if not watch.stderr_tail:
            return ""
        return "; its stderr ended: " + self._masked(" | ".join(list(watch.stderr_tail)[-3:]))


class _StartFailed(Exception):
    """Why a server could not be started, in words for the log and `/status`."""


class _OwningHttpTransport:
    """The SDK's streamable HTTP transport that also closes the HTTP client it was given."""

    def __init__(self, url: str, client: Any, max_bytes: int) -> None:
        self._client = client
        self._inner = streamable_http_client(url, http_client=client, max_sse_event_size=max_bytes)

    async def __aenter__(self) -> Any:
        return await self._inner.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            await self._client.aclose()


async def _list_tools(client: Client) -> tuple[mcp_types.Tool, ...]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None or len(tools) >= MAX_TOOLS:
            break
    return tuple(tools[:MAX_TOOLS])


def _connection_gone(exc: MCPError) -> bool:
    return exc.code == mcp_types.CONNECTION_CLOSED or exc.message == "Session terminated"


def _describe(exc: BaseException) -> str:
    """A failure in one line: an exception group (the SDK's task groups) by its first cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, _StartFailed | TimeoutError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
