"""A `SKILL.md` in the Agent Skills format (agentskills.io): YAML front matter, then the body.

The rules are the specification's: `name` is 1-64 lowercase letters, digits and single
hyphens, neither first nor last, and the same as the skill's folder; `description` is 1-1024
characters; `compatibility` at most 500; `metadata` maps strings to strings; `allowed-tools`
is a space-separated string. Fields the specification does not name are ignored, so a skill
written for another client still loads. Anything else wrong makes the skill invalid, with a
reason an operator can act on.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

SKILL_FILE = "SKILL.md"
MAX_FRONT_MATTER_CHARS = 16_000
"""More than the specification's fields can fill; a bigger block is refused unparsed."""

_NAME = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_DELIMITER = "---"


class InvalidSkill(ValueError):
    """A `SKILL.md` that breaks the format; the message says what to fix."""


@dataclass(frozen=True)
class Skill:
    """One valid skill: what the model is told about it, and its instructions."""

    name: str
    description: str
    body: str
    """The Markdown after the front matter: the instructions the prompt carries when active."""
    folder: Path
    """Its folder; resource files are read from here and nowhere else."""
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    """The specification's experimental pre-approval list: kept, not enforced (the bot asks
    no approval for its tools; `tools` in the runtime config decides which the model has)."""


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: StrictStr = Field(min_length=1, max_length=64)
    description: StrictStr = Field(min_length=1, max_length=1024)
    license: StrictStr = ""
    compatibility: StrictStr = Field("", max_length=500)
    metadata: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    allowed_tools: StrictStr = Field("", alias="allowed-tools")


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors and aliases: front matter has no use for them,
    and refusing them rules out a small block that expands into a huge one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise InvalidSkill("YAML aliases (*name) are not allowed in the front matter")
        return super().compose_node(parent, index)


def parse_skill(folder: Path, text: str) -> Skill:
    """The skill in `folder` whose `SKILL.md` reads `text`; `InvalidSkill` says what is wrong."""
    header, body = _split(text)
    fields = _load_yaml(header)
    try:
        front = _FrontMatter.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'front matter'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise InvalidSkill(problems) from None
    name = unicodedata.normalize("NFKC", front.name.strip())
    _check_name(name, folder.name)
    if not front.description.strip():
        raise InvalidSkill("description: must not be blank")
    return Skill(
        name=name,
        description=" ".join(front.description.split()),
        body=body,
        folder=folder,
        license=front.license.strip(),
        compatibility=front.compatibility.strip(),
        metadata=dict(front.metadata),
        allowed_tools=tuple(front.allowed_tools.split()),
    )


def _split(text: str) -> tuple[str, str]:
    """(front matter, body): the file must open with a `---` line and close it with another."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != _DELIMITER:
        raise InvalidSkill("SKILL.md must start with a '---' line opening the YAML front matter")
    end = next((i for i, line in enumerate(lines) if i and line.strip() == _DELIMITER), None)
    if end is None:
        raise InvalidSkill("the front matter is never closed by a '---' line")
    header = "".join(lines[1:end])
    if len(header) > MAX_FRONT_MATTER_CHARS:
        raise InvalidSkill(f"the front matter is longer than {MAX_FRONT_MATTER_CHARS:,} characters")
    return header, "".join(lines[end + 1 :]).strip()


def _load_yaml(header: str) -> dict[str, Any]:
    try:
        loaded = yaml.load(header, Loader=_NoAliasLoader)  # a SafeLoader, see above
    except yaml.YAMLError as exc:
        # The usual slip in skills written for laxer parsers: `description: Use when: ...`.
        hint = "; put quotes around a value holding ': '" if "mapping values" in str(exc) else ""
        raise InvalidSkill(
            f"the front matter is not valid YAML ({_first_line(exc)}){hint}"
        ) from None
    except RecursionError:
        raise InvalidSkill("the front matter is nested too deeply") from None
    if not isinstance(loaded, dict):
        raise InvalidSkill("the front matter must be a mapping with name and description")
    return loaded


def _check_name(name: str, folder_name: str) -> None:
    if name != name.lower():
        raise InvalidSkill(f"name {name!r} must be lowercase")
    if not _NAME.fullmatch(name):
        raise InvalidSkill(
            f"name {name!r} may hold only letters, digits and single hyphens, "
            "and must not start or end with a hyphen"
        )
    if unicodedata.normalize("NFKC", folder_name) != name:
        raise InvalidSkill(f"name {name!r} must be the same as its folder's name {folder_name!r}")


def _first_line(exc: yaml.YAMLError) -> str:
    return " ".join(str(exc).split())[:200]
