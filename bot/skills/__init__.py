"""Skills in the Agent Skills format: `preferences/skills/<name>/SKILL.md` and its files."""

from bot.skills.library import SkillLibrary, SkillProblem
from bot.skills.parsing import InvalidSkill, Skill, parse_skill
from bot.skills.resources import ResourceRefused, list_resources, read_resource

__all__ = [
    "InvalidSkill",
    "ResourceRefused",
    "Skill",
    "SkillLibrary",
    "SkillProblem",
    "list_resources",
    "parse_skill",
    "read_resource",
]
