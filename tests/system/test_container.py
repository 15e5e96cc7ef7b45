"""The container image (Dockerfile) for real, where a Docker daemon runs: `deploy/smoke.sh`
builds it and runs these. Without a daemon they skip, saying so; the compose file is checked
by whatever Compose CLI there is (no daemon needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from tests.fakes.background_server import free_port
from tests.fakes.llm import echo
from tests.fakes.openai_server import FakeOpenAiServer
from tests.fakes.telegram_server import FakeTelegramServer, User
from tests.system.harness import TELEGRAM_TOKEN, wait_for

REPO = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("MEMORY_BOT_IMAGE", "memory-bot:smoke")
ANN = 8101


def _docker_unavailable() -> str | None:
    if shutil.which("docker") is None:
        return "no docker CLI on this machine"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return "docker info did not answer within 20 s"
    if info.returncode != 0:
        return "no Docker daemon reachable (docker info failed); deploy/smoke.sh runs these"
    return None


def _compose_cli() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


NO_DAEMON = _docker_unavailable()
needs_daemon = pytest.mark.skipif(NO_DAEMON is not None, reason=str(NO_DAEMON))


def docker(*args: str, timeout: float = 120) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"docker {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout.strip()


@pytest.mark.skipif(
    _compose_cli() is None, reason="no Compose CLI (docker compose, docker-compose)"
)
def test_the_compose_file_is_valid_compose(tmp_path):
    deploy = tmp_path / "deploy"
    shutil.copytree(REPO / "deploy", deploy)
    shutil.copy(REPO / "deploy" / "bot.env.example", deploy / "bot.env")
    shutil.copy(REPO / "lightrag" / ".env.example", deploy / "lightrag.env")
    cli = _compose_cli()
    assert cli is not None
    done = subprocess.run(
        [*cli, "-f", str(deploy / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ghcr.io/hkuds/lightrag:v1.5.7" in done.stdout
    assert "bot-data:/data" in done.stdout


@pytest.fixture(scope="module")
def image() -> str:
    if NO_DAEMON is not None:
        pytest.skip(NO_DAEMON)
    if not os.environ.get("MEMORY_BOT_IMAGE"):  # smoke.sh built it; else build it here
        docker("build", "--tag", IMAGE, str(REPO), timeout=1800)
    return IMAGE


@needs_daemon
def test_the_image_runs_as_a_user_with_a_private_data_dir_and_no_compiler(image):
    script = "id -u; stat -c '%a %u' /data; command -v gcc cc make || echo none"
    lines = docker("run", "--rm", "--entrypoint", "sh", image, "-c", script).splitlines()
    assert lines[0] == "10001"
    assert lines[1] == "700 10001"
    assert lines[-1] == "none"


@needs_daemon
def test_the_container_answers_in_telegram_is_healthy_and_stops_cleanly(image, tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "runtime-config.json").write_text(
        json.dumps({"telegram": {"allowedUsers": [ANN]}, "rag": {"enabled": False}})
    )
    config.chmod(0o755)  # read by the container's user
    (config / "runtime-config.json").chmod(0o644)
    port = free_port()
    name = f"memory-bot-smoke-{uuid.uuid4().hex[:8]}"
    with FakeTelegramServer(token=TELEGRAM_TOKEN) as telegram, FakeOpenAiServer() as llm:
        docker(
            "run", "--detach", "--name", name, "--network", "host",
            "--env", f"TELEGRAM_BOT_TOKEN={TELEGRAM_TOKEN}",
            "--env", f"TELEGRAM_API_URL={telegram.api_url}",
            "--env", f"OPENAI_BASE_URL={llm.base_url}",
            "--env", f"HTTP_PORT={port}", "--env", "HTTP_LISTEN=127.0.0.1",
            "--env", "BOT_RUNTIME_CONFIG=/app/config/runtime-config.json",
            "--volume", f"{config}:/app/config:ro",
            "--health-interval", "2s", "--health-start-period", "0s",
            image,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}/readyz"

            def ready() -> bool:
                try:
                    return httpx.get(url, timeout=5).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_for(ready, 90, "the container never became ready")
            user = User(ANN, "Ann", "ann")
            telegram.send_text(user, "Hello from outside the container")
            expected = echo("Hello from outside the container")
            telegram.wait_for_sync(lambda: expected in telegram.texts(ANN), 60)

            def healthy() -> bool:
                return docker("inspect", "-f", "{{.State.Health.Status}}", name) == "healthy"

            wait_for(healthy, 30, "HEALTHCHECK never reported healthy")
            docker("stop", "--time", "40", name, timeout=60)
            assert docker("inspect", "-f", "{{.State.ExitCode}}", name) == "0"
            logs = subprocess.run(
                ["docker", "logs", name], capture_output=True, text=True, timeout=30, check=False
            )
            assert "signal received, shutting down" in logs.stdout + logs.stderr
        finally:
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
