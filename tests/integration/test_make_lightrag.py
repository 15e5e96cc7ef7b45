"""`make lightrag` (lightrag/serve.py): the no-Docker server, started from the shipped example.

The script runs from a copy of `lightrag/` whose `.env` is the shipped `.env.example` with only
the addresses, folders and keys changed, so the example's own settings meet the real server.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.lightrag_server import REPO, LightRagServer
from tests.fakes.openai_server import FakeOpenAiServer

SHIPPED = REPO / "lightrag"
PYTHON = SHIPPED / ".venv" / "bin" / "python"


def lightrag_folder(tmp_path: Path, installed: bool = True) -> Path:
    """A copy of `lightrag/` (script and example), sharing the installed server and encodings."""
    folder = tmp_path / "lightrag"
    folder.mkdir()
    for name in ("serve.py", ".env.example"):
        shutil.copy(SHIPPED / name, folder / name)
    if installed:
        for name in (".venv", "tiktoken_cache"):
            (folder / name).symlink_to(SHIPPED / name)
    return folder


def env_from_example(folder: Path, llm_url: str) -> LightRagServer:
    """Write `.env`: the example, with this test's port, folders, fake LLM and key."""
    server = LightRagServer(folder / "data", llm_url, api_key="make-lightrag-key")
    ours = dict(line.split("=", 1) for line in server.env_file().splitlines())
    wanted = {key: ours[key] for key in ours if key.startswith(("HOST", "PORT", "LIGHTRAG_API"))}
    wanted |= {key: ours[key] for key in ours if key.startswith(("LLM_", "EMBEDDING_"))}
    wanted |= {key: ours[key] for key in ("WORKING_DIR", "INPUT_DIR")}
    lines = []
    for line in (folder / ".env.example").read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if not line.startswith("#") and key in wanted:
            line = f"{key}={wanted.pop(key)}"
        lines.append(line)
    lines += [f"{key}={value}" for key, value in wanted.items()]
    (folder / ".env").write_text("\n".join(lines) + "\n")
    return server


def read_until(process: subprocess.Popen[str], marker: str, seconds: float) -> str:
    """The script's output up to the line holding `marker` (all of it if that never comes)."""
    seen: list[str] = []
    found = threading.Event()

    def read() -> None:
        for line in process.stdout or ():
            seen.append(line)
            if marker in line:
                found.set()
                return

    threading.Thread(target=read, daemon=True).start()
    found.wait(seconds)
    return "".join(seen)


@pytest.mark.skipif(not PYTHON.exists(), reason="LightRAG not installed (make lightrag-setup)")
def test_the_server_starts_from_the_example_answers_and_stops_on_ctrl_c(tmp_path):
    folder = lightrag_folder(tmp_path)
    with FakeOpenAiServer(responder=lightrag_responder) as llm:
        server = env_from_example(folder, llm.base_url)
        process = subprocess.Popen(
            [str(PYTHON), str(folder / "serve.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # its server with it, should it fail to stop on ctrl-c
        )
        try:
            output = read_until(process, "LightRAG is up at", 120)
            assert f"LightRAG is up at {server.url}" in output, output[-3000:]
            assert f'rag.url="{server.url}"' in output
            assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
            documents = f"{server.url}/documents/paginated"
            page = {"page": 1, "page_size": 10}
            assert httpx.post(documents, json=page, timeout=10).status_code == 403, "key needed"
            answer = httpx.post(documents, json=page, headers=server.headers(), timeout=10)
            assert answer.status_code == 200
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # no server left running, then fail
                process.wait(10)
                raise
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.url}/health", timeout=5)  # the server went with the script
    assert (folder / "data" / "rag_storage").is_dir(), "WORKING_DIR from .env was used"


def test_without_the_server_installed_it_says_what_to_run(tmp_path):
    folder = lightrag_folder(tmp_path, installed=False)
    done = subprocess.run(
        [sys.executable, str(folder / "serve.py")], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert "make lightrag-setup" in done.stderr


def test_the_examples_placeholder_key_is_refused_before_anything_starts(tmp_path):
    folder = lightrag_folder(tmp_path, installed=False)
    server = folder / ".venv" / "bin" / "lightrag-server"
    server.parent.mkdir(parents=True)
    started = folder / "started"
    server.write_text(f"#!/bin/sh\ntouch {started}\nexit 3\n")
    server.chmod(0o755)
    done = subprocess.run(
        [sys.executable, str(folder / "serve.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "LIGHTRAG_API_KEY" in done.stderr and "placeholder" in done.stderr
    assert not started.exists(), "no server guarded by a key everyone knows"


def test_the_env_file_made_from_the_example_is_readable_by_its_owner_only(tmp_path):
    folder = lightrag_folder(tmp_path, installed=False)
    server = folder / ".venv" / "bin" / "lightrag-server"
    server.parent.mkdir(parents=True)
    server.write_text("#!/bin/sh\nexit 3\n")  # a server that stops at once: enough here
    server.chmod(0o755)
    previous = os.umask(0o022)  # an ordinary umask: the mode must come from serve.py
    try:
        done = subprocess.run(
            [sys.executable, str(folder / "serve.py")], capture_output=True, text=True, timeout=60
        )
    finally:
        os.umask(previous)
    assert "Created" in done.stdout, done.stdout + done.stderr
    env_file = folder / ".env"
    assert env_file.read_text() == (folder / ".env.example").read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600, "it will hold API keys"
