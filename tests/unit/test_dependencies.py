"""`make` installs from two locks: requirements.lock, exactly what running the bot needs
(`make run`), and requirements-dev.lock, the test and lint tools on top. Both pin everything
pyproject.toml asks for, safely."""

import tomllib
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def locked(lock: str) -> dict[str, str]:
    pins = {}
    for line in (REPO / lock).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def runtime() -> list[Requirement]:
    return [Requirement(name) for name in PYPROJECT["dependencies"]]


def dev() -> list[Requirement]:
    return [Requirement(name) for name in PYPROJECT["optional-dependencies"]["dev"]]


def closure(roots: list[Requirement]) -> set[str]:
    """Every distribution `roots` pull in on this machine, extras and markers followed, read
    from the metadata of the packages installed here."""

    def nodes(requirement: Requirement) -> list[tuple[str, str]]:
        name = canonicalize_name(requirement.name)
        return [(name, extra) for extra in {"", *requirement.extras}]

    seen: set[tuple[str, str]] = set()
    todo = [node for root in roots for node in nodes(root)]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        name, extra = node
        for requirement in map(Requirement, requires(name) or []):
            marker = requirement.marker
            if marker.evaluate({"extra": extra}) if marker else not extra:
                todo.extend(nodes(requirement))
    return {name for name, _ in seen}


def test_each_lock_pins_its_dependencies_within_what_pyproject_allows():
    for lock, requirements in (("requirements.lock", runtime()), ("requirements-dev.lock", dev())):
        pins = locked(lock)
        for requirement in requirements:
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{name} is not in {lock} (run `make lock`)"
            assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name])


def test_make_run_installs_exactly_what_running_needs():
    assert set(locked("requirements.lock")) == closure(runtime())


def test_the_dev_lock_adds_the_tools_and_moves_no_runtime_pin():
    run, tools = locked("requirements.lock"), locked("requirements-dev.lock")
    assert not set(run) & set(tools)
    assert set(tools) == closure(dev()) - set(run)


def test_packages_with_known_vulnerabilities_are_above_their_fixed_releases():
    floors = {"aiohttp": "3.12.14", "h11": "0.16.0"}
    pins = {**locked("requirements.lock"), **locked("requirements-dev.lock")}
    for name, fixed in floors.items():
        assert tuple(map(int, pins[name].split(".")[:3])) >= tuple(map(int, fixed.split("."))), name


def test_ptbs_webhook_server_is_not_installed_since_aiohttp_serves_the_webhook():
    requirements = {canonicalize_name(r.name): r for r in runtime() + dev()}
    assert not requirements["python-telegram-bot"].extras, "PTB's extras are not used"
    for lock in ("requirements.lock", "requirements-dev.lock"):
        assert "tornado" not in locked(lock), lock


def test_the_lightrag_image_is_pinned_to_the_tested_release():
    compose = (REPO / "lightrag" / "docker-compose.yml").read_text()
    tested = (REPO / "lightrag" / "requirements.txt").read_text().split("lightrag-hku[api]==")[1]
    # The image is tagged with LightRAG's git tag, which is v-prefixed.
    assert f"ghcr.io/hkuds/lightrag:v{tested.split()[0]}" in compose
    assert ":latest" not in compose


def test_the_licence_is_an_spdx_expression_so_installing_warns_of_nothing():
    """A `license = {text = ...}` table makes setuptools print a deprecation banner on every
    `make run`; an SPDX string needs setuptools 77 or later to build."""
    assert PYPROJECT["license"] == "MIT"
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"] == [
        "setuptools>=77"
    ]
