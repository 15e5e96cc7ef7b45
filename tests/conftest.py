"""Shared fixtures: an isolated data dir, runtime config and prompts per test."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.runtime import apply_process_policies
from bot.settings import Settings
from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.openai_server import FakeOpenAiServer
from tests.fakes.postgres import PostgresServer

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
FOLDER_MARKERS = ("unit", "contract", "integration", "e2e", "system", "real_llm")
"""Each test is marked with the name of its folder, so `-m` and the folders always agree."""


if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # Started as a background job (`make test &`, nohup): SIGINT is ignored, every process the
    # tests start would inherit that, and the tests of Ctrl+C (the terminal chat, `make
    # lightrag`) would wait for an exit that never comes.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.relative_to(TESTS).parts[0]
        if folder in FOLDER_MARKERS:
            item.add_marker(folder)


@pytest.fixture(scope="session", autouse=True)
def process_policies() -> None:
    """The bot's process-wide policies (`bot/runtime.py`), as `python -m bot` applies them."""
    apply_process_policies()


@pytest.fixture(scope="session")
def postgres_server():
    """One throwaway PostgreSQL server for the whole run, started on first use."""
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def database_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database of its own for one test (its DATABASE_URL)."""
    return postgres_server.create_database()


@pytest.fixture
def own_postgres():
    """A PostgreSQL server of one test's own, to stop (`pause`) and start again (`resume`)."""
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def rag_llm():
    """The LLM and embeddings of a real LightRAG server: a deterministic local fake."""
    with FakeOpenAiServer(responder=lightrag_responder) as server:
        yield server


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A copy of the shipped preferences in a temp folder, with an empty data dir."""
    shutil.copytree(REPO / "preferences", tmp_path / "preferences")
    (tmp_path / "data").mkdir()
    return tmp_path


@pytest.fixture
def settings(workdir: Path) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        openai_api_key="sk-test-secret-key-123456",
        openai_base_url="http://127.0.0.1:9/v1",
        data_dir=workdir / "data",
        runtime_config_path=workdir / "preferences" / "runtime-config.json",
        prompts_dir=workdir / "preferences" / "prompts",
        skills_dir=workdir / "preferences" / "skills",
    )


def edit_runtime_config(path: Path, **sections: dict) -> None:
    """Merge `sections` into the runtime config file, as an operator's edit would."""
    data = json.loads(path.read_text())
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    path.write_text(json.dumps(data, indent=2))


def turn_config(path: Path, mode: str | None = None) -> RuntimeConfig:
    """The snapshot a turn takes of the runtime config at `path` (`TurnContext.config`), as it
    is now; `mode`: asking LightRAG in that query mode instead of the file's."""
    config = RuntimeConfigStore(path).current()
    if mode is None:
        return config
    return config.model_copy(update={"rag": config.rag.model_copy(update={"query_mode": mode})})


def bot_argv(workdir: Path) -> list[str]:
    """`python -m bot` with every path in `workdir` (the layout of the `workdir` fixture)."""
    return [
        sys.executable,
        "-m",
        "bot",
        "--env-file",
        str(workdir / "none.env"),
        "--data-dir",
        str(workdir / "data"),
        "--config",
        str(workdir / "preferences" / "runtime-config.json"),
        "--prompts-dir",
        str(workdir / "preferences" / "prompts"),
        "--skills-dir",
        str(workdir / "preferences" / "skills"),
    ]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any LLM or Telegram setting, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env.update(extra)
    return env
