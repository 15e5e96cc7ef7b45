"""docs/MCP.md's own-server example, run as written: a reader who copies it gets a server the
bot starts, lists and calls with the pinned SDK (mcp 2 renamed FastMCP, which broke the
usual few-line server from older docs)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from bot.config import RuntimeConfigStore
from bot.config.model import ToolsConfig
from bot.conversation import MemoryScope, ToolCall
from bot.mcp.servers import McpServers
from bot.retry import Backoff
from bot.tools import ToolContext, ToolRegistry, builtin_tools
from tests.fakes.untrusted import fences
from tests.fakes.waiting import wait_until

DOC = Path(__file__).resolve().parents[2] / "docs" / "MCP.md"
STARTUP = 30.0
CTX = ToolContext(user_id="u", session_key="k", memory_scope=MemoryScope("u", "u"))


def documented_blocks() -> tuple[str, dict[str, object]]:
    """The example's Python and its `mcp` config entry, as the doc shows them."""
    section = DOC.read_text().split("## Example: your own server", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    (config,) = re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL)
    return code, json.loads("{" + config + "}")["mcp"]


async def test_the_documented_server_starts_and_its_tool_answers(tmp_path):
    code, mcp_config = documented_blocks()
    (tmp_path / "dice_server.py").write_text(code)
    entry = mcp_config["servers"]["dice"]  # type: ignore[index]
    entry.update(command=sys.executable, cwd=str(tmp_path))  # the doc's `.venv/bin/python`
    config = tmp_path / "runtime-config.json"
    config.write_text(json.dumps({"mcp": mcp_config}))
    store = RuntimeConfigStore(config)
    backoff = Backoff(first_seconds=0.1, longest_seconds=0.5)
    servers = McpServers(lambda: store.current().mcp, {}, backoff, watch_seconds=0.05)
    registry = ToolRegistry(builtin_tools())
    registry.add_source(servers)
    await servers.start()
    try:
        names = lambda: {spec.name for spec in registry.specs(ToolsConfig())}  # noqa: E731
        await wait_until(lambda: "dice__roll" in names(), STARTUP, "dice__roll offered")
        call = ToolCall(id="c1", name="dice__roll", arguments='{"sides": 1, "count": 3}')
        answer = await registry.execute(call, CTX, ToolsConfig(), STARTUP, 8000)
    finally:
        await servers.aclose()
    assert fences(answer) == [("tool result", "1, 1, 1")], "fenced as data, as every MCP result"
