"""`/skill`: list the skills, pick this chat's, or turn it off."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
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
        self.registry.register(Command("skill", "list the skills, or pick one", self.skill))

    async def skill(self, call: CommandCall) -> str:
        self.library.refresh()
        session = await self.sessions.load(call.message.address.session_key)
        wanted = call.args.strip().lower()
        if not wanted:
            return self._listing(session.active_skill)
        if wanted in OFF_WORDS:
            if session.active_skill is None:
                return "No skill is active in this chat."
            was, session.active_skill = session.active_skill, None
            await self.sessions.save(session)
            return f"Skill {was} is off for this chat."
        skill = self.library.get(wanted)
        if skill is None:
            return f"There is no skill {call.args.strip()!r}. Send /skill to see them."
        session.active_skill = skill.name
        await self.sessions.save(session)
        return f"Skill {skill.name} is active in this chat: {skill.description}"

    def _listing(self, active: str | None) -> str:
        skills = self.library.available()
        if not skills:
            return "There are no skills yet: the operator adds them in preferences/skills/."
        lines = [f"{_mark(s.name == active)}{s.name}: {_short(s.description)}" for s in skills]
        head = "Skills (→ this chat's):" if active else "Skills (none active in this chat):"
        if active and self.library.get(active) is None:
            head = f"Skills (this chat's, {active}, is not available now):"
        return "\n".join(
            [head, *lines, "", "/skill <name> activates one, /skill off turns it off."]
        )


def _mark(active: bool) -> str:
    return "→ " if active else "• "


def _short(description: str, limit: int = 200) -> str:
    return description if len(description) <= limit else description[: limit - 1] + "…"
