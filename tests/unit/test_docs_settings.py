"""The docs name only settings that exist, and the reference tables name every one.

A runtime-config key in a doc (`memory.extraction`, or a row of a `| field |` table under a
heading or paragraph naming its section) must be a field of `RuntimeConfig`, by its camelCase
key; `docs/CONFIGURATION.md` and `docs/MEMORY.md` must list every field of what they cover;
and the environment table of `docs/CONFIGURATION.md` must be exactly the variables `Settings`
reads, as must `.env.example`'s. A renamed or removed setting then fails here instead of
leaving operators a key the bot ignores.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import AliasChoices, BaseModel

from bot.config.model import RuntimeConfig
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
SECTIONS = tuple(field.alias or name for name, field in RuntimeConfig.model_fields.items())
SECTION = "(?:" + "|".join(SECTIONS) + ")"
# A dotted key in backticks that starts with a section: `rag.queryMode`, `mcp.servers.<name>`.
DOTTED = re.compile(r"`(" + SECTION + r"(?:\.(?:[A-Za-z][A-Za-z0-9]*|<name>))+)[`: ]")
FILE_SUFFIXES = (".py", ".md", ".json", ".jsonl", ".toml", ".yml", ".yaml", ".txt")
KEY = re.compile(r"`([A-Za-z][A-Za-z0-9.]*)`")
# Where a table's section comes from: a heading, or a paragraph opening with the key.
CONTEXT = re.compile(r"^(?:#+ .*?`|`)(" + SECTION + r"(?:\.[A-Za-z][A-Za-z0-9]*)*)`")
ENTRY = "<name>"
EXAMPLE_TYPOS = {"rag.queryMod"}  # the docs' own example of a key the bot warns about


def _model_of(annotation: object) -> type[BaseModel] | None:
    """The model a field holds, itself or as the values of a dict; None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is dict and len(args) == 2:
        return _model_of(args[1])
    return None


def _is_dict(annotation: object) -> bool:
    return typing.get_origin(annotation) is dict


def _fields(model: type[BaseModel]) -> dict[str, object]:
    """The model's keys as the file spells them (camelCase), with their annotations."""
    return {field.alias or name: field.annotation for name, field in model.model_fields.items()}


def exists(path: str) -> bool:
    """Whether `a.b.c` names a key of the runtime config (any name stands for a dict's key)."""
    model: type[BaseModel] | None = RuntimeConfig
    parts = path.split(".")
    index = 0
    while index < len(parts):
        if model is None:
            return False
        annotation = _fields(model).get(parts[index])
        if annotation is None and parts[index] != ENTRY:
            return False
        if annotation is None:  # `<name>` in a listing of every key
            index += 1
            continue
        model = _model_of(annotation)
        index += 2 if _is_dict(annotation) and index + 1 < len(parts) else 1
    return True


def leaves(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every settable key under `model`, a dict's entries as `<name>`."""
    for key, annotation in _fields(model).items():
        nested = _model_of(annotation)
        if nested is None:
            yield f"{prefix}{key}"
        elif _is_dict(annotation):
            yield f"{prefix}{key}"
            yield from leaves(nested, f"{prefix}{key}.{ENTRY}.")
        else:
            yield from leaves(nested, f"{prefix}{key}.")


def documented(doc: Path) -> set[str]:
    """Every runtime-config key the doc names: dotted in the text, or a table row's key under
    the section its heading (or the paragraph before it) names."""
    found: set[str] = set()
    context: str | None = None
    in_table = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        found.update(key for key in DOTTED.findall(line + " ") if not key.endswith(FILE_SUFFIXES))
        if line.startswith("#"):
            context = None
        if (match := CONTEXT.match(line)) is not None:
            context = match.group(1)
        if line.startswith("| field "):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and context:
            first_cell = line.split("|")[1]
            for key in KEY.findall(first_cell):
                found.update(_within(context, key))
    return found


def _within(context: str, key: str) -> set[str]:
    """`key` under `context`, or under a dict of named entries the section holds (a table of
    `mcp.servers`' fields under the `mcp` heading): the key and that dict."""
    direct = f"{context}.{key}"
    if not exists(context):
        return {direct}
    model: type[BaseModel] | None = RuntimeConfig
    annotation: object = None
    for part in context.split("."):
        annotation = _fields(model)[part] if model is not None else None
        model = _model_of(annotation)
    if _is_dict(annotation):  # the table lists what each named entry holds
        return {f"{context}.{ENTRY}.{key}"}
    if exists(direct):
        return {direct}
    for name, annotation in _fields(model).items() if model is not None else []:
        if _is_dict(annotation) and exists(f"{context}.{name}.{ENTRY}.{key}"):
            return {f"{context}.{name}", f"{context}.{name}.{ENTRY}.{key}"}
    return {direct}


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_every_runtime_config_key_a_doc_names_exists(doc: Path) -> None:
    unknown = sorted(key for key in documented(doc) - EXAMPLE_TYPOS if not exists(key))
    assert unknown == [], f"{doc.name} names keys the runtime config does not have: {unknown}"


def _listed(doc: Path, key: str, listed: set[str]) -> bool:
    """Listed, or a named entry's field shown in an example of its dict (`"inputPerMillion"`)."""
    if key in listed:
        return True
    parent, _, leaf = key.rpartition(f".{ENTRY}.")
    text = doc.read_text(encoding="utf-8")
    return bool(leaf) and parent in listed and f'"{leaf}"' in text


def test_configuration_lists_every_runtime_config_key() -> None:
    doc = ROOT / "docs" / "CONFIGURATION.md"
    listed = documented(doc)
    missing = [key for key in leaves(RuntimeConfig) if not _listed(doc, key, listed)]
    assert missing == [], f"docs/CONFIGURATION.md does not list {missing}"


def test_memory_lists_every_memory_setting() -> None:
    listed = documented(ROOT / "docs" / "MEMORY.md")
    memory = _model_of(_fields(RuntimeConfig)["memory"])
    assert memory is not None
    missing = [key for key in leaves(memory, "memory.") if key not in listed]
    assert missing == [], f"docs/MEMORY.md does not list {missing}"


def env_names() -> dict[str, set[str]]:
    """Each `Settings` field and the environment variables that set it."""
    names: dict[str, set[str]] = {}
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias or field.alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias or name]
        names[name] = {str(c).upper() for c in choices if isinstance(c, str)} | {name.upper()}
    return names


def _env_table(doc: Path) -> set[str]:
    text = doc.read_text(encoding="utf-8")
    section = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\|\s*`([A-Z][A-Z0-9_]+)`", section, flags=re.MULTILINE))


def test_the_environment_table_is_what_settings_reads() -> None:
    table = _env_table(ROOT / "docs" / "CONFIGURATION.md")
    known = set().union(*env_names().values())
    unknown = sorted(table - known)
    missing = sorted(field for field, names in env_names().items() if not names & table)
    assert (unknown, missing) == ([], []), "docs/CONFIGURATION.md's environment table"


def test_env_example_sets_only_what_settings_reads() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assigned = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))
    known = set().union(*env_names().values())
    assert sorted(assigned - known) == []


def test_the_checker_tells_real_keys_from_made_up_ones() -> None:
    assert exists("memory.embeddings.timeoutSeconds")
    assert exists("mcp.servers.web.timeoutSeconds")
    assert exists("usage.prices.gpt-4o")
    assert not exists("memory.softBudget")
    assert not exists("rag.queryMod")
    assert not exists("llm.model.name")
    assert not exists("mcp.servers.<name>.timeout")


def test_the_checker_reads_tables_under_their_section(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "### `memory`\n\n| field | default |\n|---|---|\n| `softBudget`, `minScore` | 1 |\n\n"
        "`mcp.servers` maps a name to:\n\n| field | default |\n|---|---|\n| `timeout` | 1 |\n\n"
        "Set `telegram.allowedUser` or `mcp.servers.<name>.url`.\n",
        encoding="utf-8",
    )
    unknown = sorted(key for key in documented(doc) if not exists(key))
    assert unknown == ["mcp.servers.<name>.timeout", "memory.softBudget", "telegram.allowedUser"]
