"""`/skill`: list the skills, pick this chat's, or turn it off."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.i18n.catalogue import commands as texts
from bot.ports.sessions import SessionStore
from bot.skills import SkillLibrary

OFF_WORDS = ("off", "none")


@dataclass
class SkillCommands:
    """`/skill` lists the skills (→ marks this chat's), `/skill <name>` activates one, `/skill
    off` turns it off. The choice is the chat's (kept in its session, so `/new` clears it)."""

    registry: CommandRegistry
    library: SkillLibrary
    sessions: SessionStore

    def register(self) -> None:
        self.registry.register(Command("skill", texts.about_skill.say(), self.skill))

    async def skill(self, call: CommandCall) -> str:
        await self.library.refresh()
        session = await self.sessions.load(call.message.address.session_key)
        wanted = call.args.strip().lower()
        if not wanted:
            return self._listing(session.active_skill)
        if wanted in OFF_WORDS:
            if session.active_skill is None:
                return texts.no_skill_active()
            was, session.active_skill = session.active_skill, None
            await self.sessions.save(session)
            return texts.skill_off(was)
        skill = self.library.get(wanted)
        if skill is None:
            return texts.no_such_skill(repr(call.args.strip()))
        session.active_skill = skill.name
        await self.sessions.save(session)
        return texts.skill_active(skill.name, skill.description)

    def _listing(self, active: str | None) -> str:
        skills = self.library.available()
        if not skills:
            return texts.no_skills_yet()
        lines = [f"{_mark(s.name == active)}{s.name}: {_short(s.description)}" for s in skills]
        head = texts.skills_heading(active is not None)
        if active and self.library.get(active) is None:
            head = texts.skills_heading_unavailable(active)
        return "\n".join([head, *lines, "", texts.skill_usage()])


def _mark(active: bool) -> str:
    return "→ " if active else "• "


def _short(description: str, limit: int = 200) -> str:
    return description if len(description) <= limit else description[: limit - 1] + "…"
