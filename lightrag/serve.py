"""Start a LightRAG server without Docker: `make lightrag`.

Runs `lightrag-server` from `lightrag/.venv` in the `lightrag/` folder, so it reads
`lightrag/.env` (made from `.env.example` on first use), with tiktoken's encodings served from
`lightrag/tiktoken_cache` instead of the internet. Waits until `/health` answers, says where
the server is, and keeps it running until Ctrl+C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
BINARY = HERE / ".venv" / "bin" / "lightrag-server"
TIKTOKEN_CACHE = HERE / "tiktoken_cache"
STARTUP_SECONDS = 120
PLACEHOLDER_KEYS = {"", "change-me"}
"""`LIGHTRAG_API_KEY` values that must not guard a server: none, and the example's."""


def read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip().strip("\"'")
    return values


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    return False


def main() -> int:
    if not BINARY.exists():
        print("LightRAG is not installed: run `make lightrag-setup` first.", file=sys.stderr)
        return 2
    env_file = HERE / ".env"
    if not env_file.exists():
        # It will hold API keys: readable by its owner only (a copy would keep the example's 0644).
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as created:
            created.write((HERE / ".env.example").read_bytes())
        print(f"Created {env_file} from .env.example: set the LLM and embedding keys there.")
    settings = read_env(env_file)
    if settings.get("LIGHTRAG_API_KEY", "") in PLACEHOLDER_KEYS:
        print(
            f"LIGHTRAG_API_KEY in {env_file} is still the example's placeholder (or empty): "
            "anyone who guesses it could read every user's memories. Set it to a long random "
            "value (e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`), "
            "and the bot's RAG_API_KEY to the same value, then run `make lightrag` again.",
            file=sys.stderr,
        )
        return 2
    host = settings.get("HOST", "127.0.0.1")
    host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    url = f"http://{host}:{settings.get('PORT', '9621')}"

    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(TIKTOKEN_CACHE)}
    process = subprocess.Popen([str(BINARY)], cwd=HERE, env=env, stdin=subprocess.DEVNULL)
    try:
        if not wait_healthy(url, process):
            print(
                f"LightRAG did not become healthy at {url}; see its output above.", file=sys.stderr
            )
            process.terminate()
            return 1
        print(
            f"LightRAG is up at {url} (Ctrl+C stops it). In the bot's runtime config set "
            f'rag.enabled=true and rag.url="{url}".',
            flush=True,
        )
        return process.wait()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGINT)
        return process.wait(30)


if __name__ == "__main__":
    sys.exit(main())
