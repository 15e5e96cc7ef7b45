"""Tools the LLM may call: a small protocol, and a registry that runs calls safely.

Whatever goes wrong in a call (unknown tool, bad JSON, wrong arguments, an exception, a
timeout) comes back as an error text the model sees, so the tool loop carries on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from bot.config.model import ToolsConfig
from bot.conversation import ChatAddress, MemoryScope, ToolCall
from bot.ports.llm import ToolSpec
from bot.untrusted import fenced

log = logging.getLogger(__name__)

# An absolute path in an exception message: quoted (OSError quotes its file name), or bare with
# at least two parts, so that "km/h", "1/2", URLs and commands such as /forget stay as they are.
_QUOTED_PATH = re.compile(r"""(['"])/[^'"\n]*/([^/'"\n]*)\1""")
_BARE_PATH = re.compile(r"(?<![\w.~:/\\-])(?:/[^\s'\"`:;,()<>\[\]{}/]+){2,}")


class ChatSkillState(Protocol):
    """The one thing of a chat's session a tool may change: which skill is active."""

    active_skill: str | None


@dataclass(frozen=True)
class ToolContext:
    """Who a tool call is for: tools that keep data (memory) must scope it to `memory_scope`,
    the user's own memory in private, the group's in a group."""

    user_id: str
    session_key: str
    memory_scope: MemoryScope
    chat: ChatSkillState | None = None
    """The turn's session, for the `skill` tool; None outside a turn."""
    address: ChatAddress | None = None
    """Where the turn's reply goes: tools that act later (reminders) deliver there."""
    operator: bool = False
    """The channel vouches that the user runs the bot (`IncomingMessage.operator`)."""
    guest: bool = False
    """The bot is a guest in the chat (`IncomingMessage.guest`): nothing it sets can ever be
    delivered there later."""

    @property
    def shared(self) -> bool:
        """A group or a guest chat: everyone there reads what a tool returns, so a tool that
        may reach someone's private data (an MCP server's calendar, mail) is not offered."""
        return self.memory_scope.is_group or self.guest


class Tool(Protocol):
    """A function for the model. `arguments` is a pydantic model: schema and validation in one."""

    name: str
    description: str

    @property
    def arguments(self) -> type[BaseModel]:
        """The arguments' pydantic model: the JSON schema the model sees, and validation."""
        ...

    async def run(self, args: Any, context: ToolContext) -> str: ...


class RawTool(Protocol):
    """A tool described by a raw JSON schema rather than a pydantic model (an MCP server's):
    its arguments reach `run` as the parsed JSON object, for the tool's owner to validate."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, passed to the model as it is."""
        ...

    @property
    def timeout_seconds(self) -> float | None:
        """This tool's own bound on a call, in place of `llm.toolTimeoutSeconds`; None: that."""
        ...

    @property
    def in_groups(self) -> bool:
        """Whether it is offered in groups and guest chats too (see `ToolContext.shared`)."""
        ...

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> str: ...


class ToolSource(Protocol):
    """Tools that come and go while the bot runs (MCP servers), asked for at each use."""

    def current_tools(self) -> Sequence[RawTool]: ...


class NamedTool(Protocol):
    """What the prompt and `/status` show of any tool."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


class ToolRegistry:
    """Holds every tool; which ones the model sees is decided per turn by `tools` config flags
    (built-in tools) and by the sources of the others (each MCP server's config)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._sources: list[ToolSource] = []
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        # Schemas are built once: generating them costs about a millisecond per tool.
        self._specs[tool.name] = ToolSpec(tool.name, tool.description, _schema(tool.arguments))

    def add_source(self, source: ToolSource) -> None:
        """Offer `source`'s tools too, as they are at each turn; a name a built-in tool has
        stays the built-in's."""
        self._sources.append(source)

    def enabled(self, config: ToolsConfig, shared: bool = False) -> list[NamedTool]:
        """The tools a turn offers; `shared`: in a group or guest chat (`ToolContext.shared`),
        where only the sources' tools marked `in_groups` are."""
        builtin = [tool for name, tool in self._tools.items() if config.is_enabled(name)]
        return [*builtin, *self._source_tools(shared).values()]

    def specs(self, config: ToolsConfig, shared: bool = False) -> list[ToolSpec]:
        builtin = [self._specs[name] for name in self._tools if config.is_enabled(name)]
        raw = self._source_tools(shared).values()
        return [*builtin, *(ToolSpec(t.name, t.description, t.parameters) for t in raw)]

    def _source_tools(self, shared: bool) -> dict[str, RawTool]:
        found: dict[str, RawTool] = {}
        for source in self._sources:
            for tool in source.current_tools():
                if tool.name not in self._tools and (tool.in_groups or not shared):
                    found.setdefault(tool.name, tool)
        return found

    async def execute(
        self,
        call: ToolCall,
        context: ToolContext,
        config: ToolsConfig,
        timeout_seconds: float,
        max_chars: int,
    ) -> str:
        """Run one call and return its result text, or an `Error: ...` text. Never raises."""
        tool = self._tools.get(call.name) if config.is_enabled(call.name) else None
        shared = context.shared
        raw_tool = None if call.name in self._tools else self._source_tools(shared).get(call.name)
        if tool is None and raw_tool is None:
            available = ", ".join(t.name for t in self.enabled(config, shared)) or "none"
            return f"Error: unknown tool '{call.name}'. Available tools: {available}."
        try:
            raw = json.loads(call.arguments or "{}")
            args = tool.arguments.model_validate(raw) if tool is not None else raw
        except json.JSONDecodeError as exc:
            return f"Error: the arguments are not valid JSON ({exc.msg}). Send a JSON object."
        except RecursionError:
            log.warning("[Tools] %s: arguments nested too deeply, refused", call.name)
            return "Error: the arguments are nested too deeply. Send a flat JSON object."
        except ValidationError as exc:
            return f"Error: invalid arguments for {call.name}: {_brief(exc)}"
        if raw_tool is not None:
            if not isinstance(args, dict):
                return "Error: the arguments must be a JSON object."
            timeout = raw_tool.timeout_seconds or timeout_seconds
            # What an MCP server sends back (a web page, say) is data: fenced, never obeyed.
            result = await self._run(call, raw_tool.run(args, context), timeout, max_chars)
            return fenced("tool result", result)
        assert tool is not None
        return await self._run(call, tool.run(args, context), timeout_seconds, max_chars)

    @staticmethod
    async def _run(
        call: ToolCall, running: Awaitable[str], timeout_seconds: float, max_chars: int
    ) -> str:
        try:
            async with asyncio.timeout(timeout_seconds):
                result = await running
        except TimeoutError:
            log.warning("[Tools] %s timed out after %ss", call.name, timeout_seconds)
            return f"Error: {call.name} timed out after {timeout_seconds:g} seconds."
        except Exception as exc:
            refused = isinstance(exc, REFUSALS)  # bad input, not a bug: no traceback
            log.warning("[Tools] %s failed: %s", call.name, exc, exc_info=not refused)
            return f"Error: {call.name} failed: {without_paths(str(exc))}"
        return truncate(result, max_chars)


REFUSALS = (ValueError, ArithmeticError)
"""How a tool refuses its arguments (an expression it does not evaluate, a number too large):
the model reads why; the log gets one line, not the traceback a tool's bug gets."""


def without_paths(text: str) -> str:
    """`text` with every absolute path cut to `…/<file name>`: the model and the user see what
    went wrong, not how the server's disk is laid out (the log keeps the whole path)."""
    text = _QUOTED_PATH.sub(lambda m: f"{m[1]}…/{m[2]}{m[1]}", text)
    return _BARE_PATH.sub(lambda m: "…/" + m[0].rsplit("/", 1)[-1], text)


def truncate(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n… [truncated {len(text) - max_chars} characters]"


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _brief(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )
