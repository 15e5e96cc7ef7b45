"""`make` installs from requirements.lock: it pins everything pyproject.toml asks for, safely."""

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]


def locked() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] + project["optional-dependencies"]["dev"]
    return [Requirement(name) for name in names]


def test_the_lock_pins_every_dependency_within_what_pyproject_allows():
    pins = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in requirements.lock (run `make lock`)"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name])


def test_packages_with_known_vulnerabilities_are_above_their_fixed_releases():
    floors = {"aiohttp": "3.12.14", "h11": "0.16.0"}
    pins = locked()
    for name, fixed in floors.items():
        assert tuple(map(int, pins[name].split(".")[:3])) >= tuple(map(int, fixed.split("."))), name


def test_ptbs_webhook_server_is_not_installed_since_aiohttp_serves_the_webhook():
    requirements = {canonicalize_name(r.name): r for r in declared()}
    assert not requirements["python-telegram-bot"].extras, "PTB's extras are not used"
    assert "tornado" not in locked()


def test_the_lightrag_image_is_pinned_to_the_tested_release():
    compose = (REPO / "lightrag" / "docker-compose.yml").read_text()
    tested = (REPO / "lightrag" / "requirements.txt").read_text().split("lightrag-hku[api]==")[1]
    # The image is tagged with LightRAG's git tag, which is v-prefixed.
    assert f"ghcr.io/hkuds/lightrag:v{tested.split()[0]}" in compose
    assert ":latest" not in compose
