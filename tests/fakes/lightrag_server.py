"""A real `lightrag-server` (PyPI lightrag-hku[api]) on 127.0.0.1, for tests and benchmarks.

Its LLM and embeddings point at a local OpenAI-compatible fake (`lightrag_responder`), so a
real knowledge graph is built with no network. It runs from the LightRAG venv that
`make lightrag-setup` creates (`make test` does it), with tiktoken's files prepared offline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from bot.adapters.embeddings.embedded import DIMENSIONS as EMBEDDED_MODEL_DIMENSIONS
from tests.fakes.background_server import free_port

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO / "lightrag" / ".venv" / "bin" / "lightrag-server"
TIKTOKEN_CACHE = REPO / "lightrag" / "tiktoken_cache"
SETUP_HINT = "run `make lightrag-setup` (`make test` does it) to install the LightRAG server"
EMBEDDING_DIM = 64
"""The bag-of-words fake's; a server on `semantic_embedder()` needs `SEMANTIC_EMBEDDING_DIM`."""
SEMANTIC_EMBEDDING_DIM = EMBEDDED_MODEL_DIMENSIONS
NOT_DONE = ("pending", "parsing", "analyzing", "processing", "preprocessed")


class LightRagServer:
    """Start, stop, kill and restart one server; its data persists in `workdir`."""

    def __init__(
        self,
        workdir: Path,
        llm_base_url: str,
        api_key: str = "test-rag-key",
        port: int | None = None,
        extra_env: dict[str, str] | None = None,
        embedding_dim: int = EMBEDDING_DIM,
    ) -> None:
        self.workdir = workdir
        self.llm_base_url = llm_base_url
        self.api_key = api_key
        self.port = port or free_port()
        self.extra_env = extra_env or {}
        self.embedding_dim = embedding_dim
        self.process: subprocess.Popen[bytes] | None = None
        self.binary = Path(os.environ.get("LIGHTRAG_SERVER", DEFAULT_BINARY))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "server.log"

    def env_file(self) -> str:
        settings = {
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WORKING_DIR": str(self.workdir / "rag_storage"),
            "INPUT_DIR": str(self.workdir / "inputs"),
            "LLM_BINDING": "openai",
            "LLM_BINDING_HOST": self.llm_base_url,
            "LLM_MODEL": "fake-extractor",
            "LLM_BINDING_API_KEY": "fake-llm-key",
            "EMBEDDING_BINDING": "openai",
            "EMBEDDING_BINDING_HOST": self.llm_base_url,
            "EMBEDDING_MODEL": "fake-embedding",
            "EMBEDDING_DIM": str(self.embedding_dim),
            "EMBEDDING_BINDING_API_KEY": "fake-embedding-key",
            "LIGHTRAG_KV_STORAGE": "JsonKVStorage",
            "LIGHTRAG_VECTOR_STORAGE": "NanoVectorDBStorage",
            "LIGHTRAG_GRAPH_STORAGE": "NetworkXStorage",
            "LIGHTRAG_DOC_STATUS_STORAGE": "JsonDocStatusStorage",
            "ENABLE_LLM_CACHE": "false",
            "ENABLE_LLM_CACHE_FOR_EXTRACT": "false",
            "COSINE_THRESHOLD": "0.05",
            "LIGHTRAG_API_KEY": self.api_key,
            "WHITELIST_PATHS": "/health",
            "MAX_ASYNC": "4",
            "LOG_LEVEL": "WARNING",
            **self.extra_env,
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def start(self, timeout: float = 90) -> LightRagServer:
        if not self.binary.exists():
            raise RuntimeError(f"{self.binary} not found: {SETUP_HINT}")
        if not TIKTOKEN_CACHE.is_dir():
            raise RuntimeError(f"{TIKTOKEN_CACHE} not found: {SETUP_HINT}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / ".env").write_text(self.env_file())
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(TIKTOKEN_CACHE)}
        for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LIGHTRAG_API_KEY"):
            env.pop(key, None)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(self.binary)],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._wait_healthy(timeout)
        return self

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"lightrag-server exited: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"lightrag-server not healthy after {timeout}s: {self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """As a crash would: SIGKILL to the whole process group."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(15)

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    # -- helpers for tests -----------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}

    def wait_until_processed(self, at_least: int = 1, timeout: float = 60) -> dict[str, int]:
        """Wait until no document is still in the pipeline and `at_least` are processed."""
        deadline = time.monotonic() + timeout
        counts: dict[str, int] = {}
        while time.monotonic() < deadline:
            answer = httpx.get(
                f"{self.url}/documents/status_counts", headers=self.headers(), timeout=5
            )
            counts = answer.json()["status_counts"]
            if counts.get("processed", 0) >= at_least and not any(counts.get(s) for s in NOT_DONE):
                return counts
            time.sleep(0.2)
        raise AssertionError(f"documents not processed in {timeout}s: {counts}")

    def processed_count(self) -> int:
        answer = httpx.get(f"{self.url}/documents/status_counts", headers=self.headers(), timeout=5)
        return int(answer.json()["status_counts"].get("processed", 0))

    def clear(self, timeout: float = 60) -> None:
        """Delete every document, entity and relation (`DELETE /documents`), once not busy."""
        deadline = time.monotonic() + timeout
        while True:
            answer = httpx.delete(f"{self.url}/documents", headers=self.headers(), timeout=30)
            status = answer.json().get("status")
            if status == "success":
                return
            if status != "busy" or time.monotonic() > deadline:
                raise AssertionError(f"clearing the server failed: {answer.text[:300]}")
            time.sleep(0.2)

    def file_sources(self) -> list[str]:
        """The file source of every document the server holds, all pages."""
        return [d["file_path"] for d in self.documents()]

    def content_summaries(self) -> list[str]:
        """The start of every document's text (LightRAG keeps its first 250 characters)."""
        return [d["content_summary"] for d in self.documents()]

    def documents(self) -> list[dict]:
        """Every document's status record as `/documents/paginated` lists it, all pages."""
        documents: list[dict] = []
        page, pages = 1, 1
        while page <= pages:
            answer = httpx.post(
                f"{self.url}/documents/paginated",
                json={"page": page, "page_size": 200},
                headers=self.headers(),
                timeout=10,
            ).json()
            documents += answer["documents"]
            pages = int(answer["pagination"]["total_pages"])
            page += 1
        return documents
