"""Skill folders written by tests, in the Agent Skills layout."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    directory: Path, name: str, description: str, body: str = "", extra: str = ""
) -> Path:
    """`directory/<name>/SKILL.md` with that front matter (plus `extra` YAML lines) and body;
    returns the skill's folder."""
    folder = directory / name
    folder.mkdir(parents=True, exist_ok=True)
    front = f"name: {name}\ndescription: {description}\n{extra}"
    (folder / "SKILL.md").write_text(f"---\n{front}---\n\n{body}\n", encoding="utf-8")
    return folder
