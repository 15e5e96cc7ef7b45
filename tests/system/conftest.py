"""Fixtures of the system tests: a started stack per test, LightRAG shared where it can be."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fakes.lightrag_server import REPO, LightRagServer
from tests.fakes.misbehaving_servers import RecordingProxy
from tests.fakes.openai_server import EchoResponder, FakeOpenAiServer
from tests.fakes.telegram_server import FakeTelegramServer
from tests.system.harness import RAG_KEY, TELEGRAM_TOKEN, SystemStack


@pytest.fixture(scope="session")
def rag_llm_url():
    """LightRAG's own LLM and embeddings: the deterministic fake, in a process of its own so
    that under load it does not compete with the emulator for this process's GIL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.serve_lightrag_llm"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield url
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="session")
def shared_lightrag(rag_llm_url, tmp_path_factory):
    """One LightRAG for the tests that neither kill it nor flood it; users never overlap."""
    server = LightRagServer(tmp_path_factory.mktemp("lightrag"), rag_llm_url, RAG_KEY)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_lightrag(rag_llm_url, tmp_path):
    """A LightRAG of this test alone, to kill, restart or flood."""
    server = LightRagServer(tmp_path / "lightrag", rag_llm_url, RAG_KEY)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def make_stack(tmp_path):
    """`make_stack(lightrag, allowed=[...], webhook=False, ops=False, **config)`: a started
    stack, stopped afterwards; `ops` turns on the HTTP listener (`stack.ops_url`)."""
    started: list[tuple[SystemStack, list]] = []

    def make(
        lightrag: LightRagServer,
        allowed: list[int],
        log_level: str = "INFO",
        webhook: bool = False,
        ops: bool = False,
        **config,
    ) -> SystemStack:
        telegram = FakeTelegramServer(token=TELEGRAM_TOKEN)
        llm = EchoResponder()
        llm_server = FakeOpenAiServer(responder=llm)
        rag = RecordingProxy(lightrag.url)
        servers = [telegram, llm_server, rag]
        for server in servers:
            server.start()
        workdir = tmp_path / f"bot{len(started)}"
        stack = SystemStack.create(
            workdir,
            telegram,
            llm_server,
            llm,
            lightrag,
            rag,
            allowed,
            config,
            log_level,
            webhook,
            ops,
        )
        started.append((stack, servers))
        stack.bot.start(telegram)
        return stack

    yield make
    for stack, servers in reversed(started):
        if stack.bot.alive:
            stack.bot.stop()
        for server in reversed(servers):
            server.stop()
