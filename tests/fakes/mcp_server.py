"""An MCP server for the tests, written with the SDK's `MCPServer` (FastMCP's successor), run
as its own process over stdio or streamable HTTP, as a real server would be.

    python -m tests.fakes.mcp_server stdio
    python -m tests.fakes.mcp_server http PORT [--json-response]
    python -m tests.fakes.mcp_server flood-stdout   (hostile: bytes without end, no line break)
    python -m tests.fakes.mcp_server many-tools     (hostile: 205 tools, 200 of 120 KB schemas)

Its tools: `web_search` (canned results naming the query), `crash_once` (the process exits
the first time, while the call is open; a marker file remembers it), `flood` (answers more
than any cap allows), `slow` (sleeps), `picture` (an image and a text). Over HTTP every
request must carry `Authorization: Bearer $MCP_TEST_TOKEN` when that variable is set.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent

server = MCPServer("test-tools")
REPO = Path(__file__).resolve().parents[2]


def stdio_entry(mode: str = "stdio", **fields: Any) -> dict[str, Any]:
    """A `mcp.servers` entry (runtime config JSON) that runs this server over stdio."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", mode],
        "cwd": str(REPO),
        **fields,
    }


class HttpMcpServer:
    """This server over streamable HTTP, as its own process on a free loopback port; it can
    be killed and started again on the same port, as a service manager would."""

    def __init__(self, token: str | None = None, json_response: bool = False) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._token = token
        self._json_response = json_response
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpMcpServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def start(self) -> None:
        env = dict(os.environ)
        if self._token:
            env["MCP_TEST_TOKEN"] = self._token
        args = [sys.executable, "-m", "tests.fakes.mcp_server", "http", str(self.port)]
        if self._json_response:
            args.append("--json-response")
        self._process = subprocess.Popen(args, cwd=REPO, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("the MCP test server did not start")

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@server.tool()
def web_search(query: str, max_results: int = 3) -> str:
    """Search the web and return the top results."""
    return "\n".join(
        f"{n}. {query.title()}: result {n} from example.org/{n}" for n in range(1, max_results + 1)
    )


@server.tool()
def crash_once() -> str:
    """Dies the first time it is called (the marker file in MCP_CRASH_MARKER remembers)."""
    marker = Path(os.environ["MCP_CRASH_MARKER"])
    if not marker.exists():
        marker.write_text("crashed")
        os._exit(3)
    return f"still standing (pid {os.getpid()})"


@server.tool()
def flood(kilobytes: int = 4096) -> str:
    """Answers with `kilobytes` of text."""
    return "x" * (kilobytes * 1024)


@server.tool()
async def slow(seconds: float = 30) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return "finally"


@server.tool()
def picture() -> list[Any]:
    """A chart, as an image and a caption."""
    png = base64.b64encode(b"\x89PNG" + b"\0" * 4000).decode()
    return [TextContent(text="Sales chart:"), ImageContent(data=png, mime_type="image/png")]


def _with_bearer(app: Any, token: str) -> Any:
    async def checked(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorised"})
            return
        await app(scope, receive, send)

    return checked


def _serve_http(port: int, json_response: bool) -> None:
    import uvicorn

    app = server.streamable_http_app(json_response=json_response, host="127.0.0.1")
    token = os.environ.get("MCP_TEST_TOKEN")
    uvicorn.run(
        _with_bearer(app, token) if token else app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
    )


def _many_tools(count: int) -> None:
    """`count` tools more, each taking one argument whose schema is about 120 KB: a server
    that would decide how big every prompt is."""
    from pydantic import Field, create_model

    fields: dict[str, Any] = {
        f"option_{n}": (str, Field("", description="a setting of the tool " * 10))
        for n in range(400)
    }
    options = create_model("Options", **fields)
    for n in range(count):

        def tool(options: Any) -> str:
            return "done"

        tool.__annotations__ = {"options": options, "return": str}
        server.add_tool(tool, name=f"tool_{n}", description=f"Tool number {n}.")


def _flood_stdout() -> None:
    sys.stdin.readline()  # the client's first message
    chunk = b"y" * 65_536
    while True:
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    elif sys.argv[1] == "many-tools":  # 200 tools more, each with a 120 KB schema
        _many_tools(200)
        server.run("stdio")
    elif sys.argv[1] == "flood-stdout":
        _flood_stdout()
    else:
        _serve_http(int(sys.argv[2]), "--json-response" in sys.argv)
