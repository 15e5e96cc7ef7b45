"""The `skill` tool: the model activates a skill, turns it off, or reads one of its files."""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, Field

from bot.skills import ResourceRefused, Skill, SkillLibrary, list_resources, read_resource
from bot.tools.registry import ToolContext


class SkillArguments(BaseModel):
    action: Literal["activate", "deactivate", "read"]
    name: str = Field(
        "",
        max_length=64,
        description="activate: a name from # Available Skills; read: the skill (default: "
        "the active one).",
    )
    path: str = Field(
        "",
        max_length=512,
        description="read: a file of the skill, relative to its folder (references/guide.md).",
    )


class SkillTool:
    """Changes only the turn's own chat (`ToolContext.chat`, its session): the new skill's
    instructions are in the system prompt from the model's next call on, and in every turn of
    the chat until it is turned off or `/new` starts afresh."""

    name = "skill"
    description = (
        "Instructions for particular tasks (see Available Skills). activate: load one by name "
        "when a request matches its description. deactivate: stop using it. read: read a file "
        "its instructions refer to."
    )
    arguments = SkillArguments

    def __init__(self, library: SkillLibrary) -> None:
        self._library = library

    async def run(self, args: SkillArguments, context: ToolContext) -> str:
        chat = context.chat
        if chat is None:
            return "Error: skills work only inside a conversation."
        if args.action == "deactivate":
            if chat.active_skill is None:
                return "No skill is active."
            was, chat.active_skill = chat.active_skill, None
            return f"Skill {was} is off; # Active Skill is gone from the next call on."
        if args.action == "read":
            return await self._read(args, chat.active_skill)
        skill = self._library.get(args.name)
        if skill is None:
            return f"Error: there is no skill {args.name!r}. Skills: {self._names()}."
        if chat.active_skill == skill.name:  # its instructions are in the prompt already
            return f"Skill {skill.name} is already active."
        chat.active_skill = skill.name
        return _activated(skill, await asyncio.to_thread(list_resources, skill))

    async def _read(self, args: SkillArguments, active: str | None) -> str:
        name = args.name or active
        if not name:
            return f"Error: no skill is active; name one to read from. Skills: {self._names()}."
        skill = self._library.get(name)
        if skill is None:
            return f"Error: there is no skill {name!r}. Skills: {self._names()}."
        try:
            return await asyncio.to_thread(read_resource, skill, args.path)
        except ResourceRefused as exc:
            return f"Error: {exc}"

    def _names(self) -> str:
        return ", ".join(s.name for s in self._library.available()) or "none"


def _activated(skill: Skill, files: list[str]) -> str:
    text = f"Skill {skill.name} is active: its instructions are in the system prompt now."
    if files:
        text += " Its files (action read, path): " + ", ".join(files)
    return text
