"""A turn that uses a tool of an MCP server: the whole app with the scripted LLM, an MCP
server written in the tests run by the app over stdio, `/status`, and the terminal bot
starting and stopping its server with itself."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from bot.conversation import ChatAddress, IncomingMessage
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, say
from tests.e2e.test_terminal_chat import _read_until, start_bot
from tests.fakes.channel import RecordingChannel
from tests.fakes.mcp_server import HttpMcpServer, stdio_entry
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.untrusted import unfenced
from tests.fakes.waiting import wait_until

STARTUP = 30.0


def searching(body: dict[str, Any]) -> Reply:
    """The model: search first, then answer from the first line inside the tool's fence."""
    results = [unfenced(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    if not results:
        return Reply(tool_calls=[("search__web_search", '{"query": "sea otters"}')])
    return Reply(text=f"From the web: {results[-1].splitlines()[0]}")


async def test_the_answer_uses_an_mcp_tool_result(app, settings, fake_llm):
    edit_runtime_config(
        settings.runtime_config_path,
        mcp={"servers": {"search": stdio_entry(), "broken": {"command": "/nonexistent/mcp"}}},
    )
    await app.start()
    await wait_until(lambda: "search" in _ready(app), STARTUP, "search ready")
    fake_llm.responder = searching
    channel = RecordingChannel()
    await app.handle(say(ALICE, "what's new about sea otters?"), channel)

    assert channel.texts() == ["From the web: 1. Sea Otters: result 1 from example.org/1"]
    offered = {tool["function"]["name"]: tool["function"] for tool in fake_llm.requests[0]["tools"]}
    assert offered["search__web_search"]["parameters"]["required"] == ["query"]
    assert not [name for name in offered if name.startswith("broken__")]
    assert "- search__web_search: Search the web" in fake_llm.requests[0]["messages"][0]["content"]

    await app.handle(say(ALICE, "/status"), channel)
    status = channel.texts()[-1]
    assert "MCP servers: search ready (5 tools); broken down" in status
    assert "/nonexistent" not in status, "paths are for operators"
    await app.handle(say(ALICE, "/status", operator=True), channel)
    assert "command not found: /nonexistent/mcp" in channel.texts()[-1]


async def test_in_a_group_only_a_server_marked_in_groups_is_offered(app, settings, fake_llm):
    """Everyone in a group reads a tool's result: a server that may reach someone's data is
    offered in private chats alone, until its config says `inGroups`."""
    notes = stdio_entry()
    edit_runtime_config(settings.runtime_config_path, mcp={"servers": {"search": notes}})
    await app.start()
    await wait_until(lambda: "search" in _ready(app), STARTUP, "search ready")
    fake_llm.responder = searching
    channel = RecordingChannel()
    group = ChatAddress("test", "-100777")
    asked = IncomingMessage(group, "user-1", "@bot what's new about sea otters?", in_group=True)
    await app.handle(asked, channel)
    offered = [tool["function"]["name"] for tool in fake_llm.requests[-1].get("tools", [])]
    assert not [name for name in offered if name.startswith("search__")]
    assert "search__web_search" not in fake_llm.requests[-1]["messages"][0]["content"]
    assert "Error: unknown tool 'search__web_search'" in json.dumps(fake_llm.requests[-1])

    edit_runtime_config(
        settings.runtime_config_path, mcp={"servers": {"search": {**notes, "inGroups": True}}}
    )
    await wait_until(
        lambda: app.config.current().mcp.servers["search"].in_groups, 5, "the edit read"
    )
    new = IncomingMessage(group, "user-1", "/new", in_group=True)
    await app.handle(new, channel)  # the refused call stays in the session otherwise
    await app.handle(asked, channel)
    assert channel.texts()[-1] == "From the web: 1. Sea Otters: result 1 from example.org/1"
    assert app.mcp.connection("search") is not None


async def test_a_server_that_never_starts_does_not_hold_up_the_answer(app, settings, fake_llm):
    edit_runtime_config(
        settings.runtime_config_path,
        mcp={"servers": {"hang": {"command": "sleep", "args": ["600"]}}},
    )
    await app.start()
    channel = RecordingChannel()
    await app.handle(say(ALICE, "still there?"), channel)
    assert channel.texts() == ["echo: still there?"]
    assert app.mcp.states()["hang"].phase == "starting"


def _ready(app) -> list[str]:
    return [name for name, state in app.mcp.states().items() if state and state.phase == "ready"]


def test_the_terminal_bot_runs_its_mcp_servers_and_stops_them_on_quit(workdir):
    """A stdio server it starts, and an HTTP one whose token comes from the bot's `.env`."""
    token = "mcp-token-from-dotenv-77f1"
    (workdir / "none.env").write_text(f"SEARCH_TOKEN={token}\n")  # the --env-file of bot_argv
    with HttpMcpServer(token=token) as http, FakeOpenAiServer(responder=searching) as llm:
        config_path = workdir / "preferences" / "runtime-config.json"
        config = json.loads(config_path.read_text())
        bearer = {"Authorization": "Bearer ${SEARCH_TOKEN}"}
        config["mcp"] = {
            "servers": {"search": stdio_entry(), "web": {"url": http.url, "headers": bearer}}
        }
        config_path.write_text(json.dumps(config))
        bot = start_bot(workdir, OPENAI_BASE_URL=llm.base_url)
        assert bot.stdin and bot.stdout
        status = ""
        for _ in range(int(STARTUP / 0.2)):  # /status until both are up
            bot.stdin.write("/status\n")
            bot.stdin.flush()
            status = _read_until(bot, "MCP servers:")
            if "search ready" in status and "web ready" in status:
                break
            subprocess.run(["sleep", "0.2"], check=True)
        assert "MCP servers: search ready (5 tools); web ready (5 tools)" in status
        server_pids = _children_running("tests.fakes.mcp_server", bot.pid)
        assert len(server_pids) == 1, "the stdio server runs as the bot's child"
        bot.stdin.write("otters?\n")
        bot.stdin.flush()
        assert "From the web: 1. Sea Otters" in _read_until(bot, "From the web")
        bot.stdin.write("/quit\n")
        bot.stdin.flush()
        assert bot.wait(30) == 0
        leftovers = bot.stdout.read() + (bot.stderr.read() if bot.stderr else "")
    assert not [pid for pid in server_pids if os.path.exists(f"/proc/{pid}")]
    log = (workdir / "data" / "bot.log").read_text()
    assert "[MCP] web: ready, 5 tools" in log
    assert token not in log + status + leftovers


def _children_running(marker: str, parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                args = cmdline.read().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and marker in args:
            found.append(int(entry))
    return found
