"""The container files agree with each other and with the bot: what `docker compose config`
cannot see (no daemon needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from bot.adapters.telegram.options import TelegramOptions
from bot.config.model import RuntimeConfig, unknown_keys

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((REPO / "deploy" / "docker-compose.yml").read_text())
DEPLOY_CONFIG = json.loads((REPO / "deploy" / "config" / "runtime-config.json").read_text())


def instructions(name: str) -> list[str]:
    return re.findall(rf"^{name}\s+(.+)$", DOCKERFILE, flags=re.MULTILINE)


def test_the_base_image_is_pinned_by_tag_and_digest():
    (base,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE, flags=re.MULTILINE)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", base), base
    assert all(line.startswith("${PYTHON_IMAGE}") for line in instructions("FROM"))


def test_the_image_runs_as_a_numeric_non_root_user_and_probes_readiness():
    (user,) = instructions("USER")
    uid, gid = user.split(":")
    assert int(uid) > 0 and int(gid) > 0
    assert instructions("STOPSIGNAL") == ["SIGTERM"]
    healthcheck = DOCKERFILE.split("HEALTHCHECK", 1)[1].split("\n\n", 1)[0]
    assert '"bot.ops.probe", "readyz"' in healthcheck
    port = re.search(r"HTTP_PORT=(\d+)", DOCKERFILE)
    assert port is not None and instructions("EXPOSE") == [port.group(1)]


def test_the_image_installs_only_locked_versions():
    assert "--constraint requirements.lock" in DOCKERFILE
    assert "grep -vxFf requirements.lock" in DOCKERFILE


def test_compose_runs_the_lightrag_release_the_bot_is_tested_against():
    standalone = yaml.safe_load((REPO / "lightrag" / "docker-compose.yml").read_text())
    expected = standalone["services"]["lightrag"]["image"]
    assert COMPOSE["services"]["lightrag"]["image"] == expected
    assert not expected.endswith(":latest")


def test_the_bots_config_in_compose_points_at_the_lightrag_service():
    config = RuntimeConfig.model_validate(DEPLOY_CONFIG)
    assert unknown_keys(config) == []
    assert config.rag.enabled
    url = urlsplit(config.rag.url)
    lightrag = COMPOSE["services"]["lightrag"]
    assert url.hostname == "lightrag"
    assert str(url.port) == str(lightrag["environment"]["PORT"])
    assert lightrag["environment"]["HOST"] == "0.0.0.0"


def test_compose_keeps_data_on_named_volumes_and_secrets_in_env_files():
    declared = set(COMPOSE["volumes"])
    for name, service in COMPOSE["services"].items():
        for volume in service["volumes"]:
            source = volume.split(":")[0]
            if not source.startswith("."):  # a bind mount of this folder (the config, read-only)
                assert source in declared, f"{name}: {volume} is not a named volume"
            else:
                assert volume.endswith(":ro"), volume
        assert service["env_file"], name
        secretish = [k for k in service["environment"] if re.search(r"KEY|TOKEN|SECRET", k)]
        assert secretish == [], f"{name} names secrets inline: {secretish}"
    bot = COMPOSE["services"]["bot"]
    assert "bot-data:/data" in bot["volumes"]
    assert bot["environment"]["BOT_DATA_DIR"] == "/data"


def test_the_stop_grace_period_covers_the_bots_own_shutdown():
    grace = COMPOSE["services"]["bot"]["stop_grace_period"]
    seconds = int(grace.rstrip("s"))
    own = TelegramOptions.__dataclass_fields__["shutdown_grace_seconds"].default
    drain = RuntimeConfig().rag.shutdown_drain_seconds
    assert seconds >= float(own) + drain + 5  # type: ignore[arg-type]
    assert COMPOSE["services"]["bot"]["stop_signal"] == "SIGTERM"
