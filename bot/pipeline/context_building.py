"""Order 20: the system prompt, from prompt files, memory, long-term recall, the chat's
skill and tools."""

from __future__ import annotations

import asyncio
import logging

from bot.memory.documents import holds_document_parts, memory_section
from bot.pipeline.context import TurnContext
from bot.ports.memory import MemoryRecall
from bot.ports.rag import RagRecall
from bot.prompts import PromptFiles
from bot.rag.relevance import earned
from bot.skills import SkillLibrary, list_resources
from bot.tools import ToolRegistry
from bot.untrusted import UNTRUSTED_RULE, fenced, neutralised, one_line

log = logging.getLogger(__name__)

SKILL_TOOL = "skill"
SKILLS_HINT = "When a request matches a skill's description, activate it with the skill tool."
TOOL_LINE_CHARS = 1_000
"""A tool's line in `# Available Tools`: its description, from an MCP server perhaps, folded
to one line so that it cannot open a section of the prompt."""


class ContextBuildingSystem:
    """Builds `ctx.system_prompt` in the spec's section order.

    Prompt files, then `# Memory` (short-term pack), `# Relevant Memory` (RAG), the chat's
    `# Active Skill`, `# Available Tools`, `# Available Skills` (when the model may activate
    them), and the summary of this conversation's older turns. Memory and RAG are fetched
    concurrently; either one failing only leaves its section out. Then RAG's block keeps only
    what earns its place next to `# Memory` (`bot/rag/relevance.py`).
    """

    name = "ContextBuilding"
    order = 20

    def __init__(
        self,
        prompts: PromptFiles,
        tools: ToolRegistry,
        memory: MemoryRecall | None = None,
        rag: RagRecall | None = None,
        skills: SkillLibrary | None = None,
    ) -> None:
        self._prompts = prompts
        self._tools = tools
        self._memory = memory
        self._rag = rag
        self._skills = skills

    def should_process(self, ctx: TurnContext) -> bool:
        return ctx.notice is None  # an earlier system already has the reply: no model call

    async def process(self, ctx: TurnContext) -> None:
        if self._skills is not None:
            await self._skills.refresh()  # a SKILL.md added, edited or removed applies from here
        if self._memory is not None and self._rag is not None:
            ctx.memory_pack, ctx.rag_context = await asyncio.gather(
                self._recall_memory(ctx), self._recall_rag(ctx)
            )
        else:
            ctx.memory_pack = await self._recall_memory(ctx)
            ctx.rag_context = await self._recall_rag(ctx)
        if ctx.rag_context:  # only what `# Memory` does not hold already and the question needs
            ctx.rag_context = earned(ctx.rag_context, ctx.user_text, ctx.memory_pack)
        await self._take_skill(ctx)
        ctx.system_prompt = self.render(ctx)

    async def refreshed(self, ctx: TurnContext) -> str:
        """The system prompt again, after a tool changed the chat's skill mid-turn."""
        await self._take_skill(ctx)
        ctx.system_prompt = self.render(ctx)
        return ctx.system_prompt

    async def _take_skill(self, ctx: TurnContext) -> None:
        """The chat's active skill into `ctx`; one whose folder is gone or broken is left
        out (the session keeps its name: it returns once the file is back)."""
        name = ctx.session.active_skill
        skill = self._skills.get(name) if self._skills is not None and name else None
        if skill is None:
            if name:
                log.debug("[Context] skill %s of %s is not available", name, ctx.session.key)
            ctx.skill, ctx.skill_text = None, ""
            return
        text = skill.body or "(This skill has no instructions beyond its description.)"
        readable = ctx.config.tools.is_enabled(SKILL_TOOL)  # the model reads them with it
        files = await asyncio.to_thread(list_resources, skill) if readable else []
        if files:
            text += "\n\nFiles of this skill (the skill tool reads them): " + ", ".join(files)
        ctx.skill, ctx.skill_text = skill.name, text

    async def _recall_memory(self, ctx: TurnContext) -> str:
        if self._memory is None or not ctx.config.memory.enabled:
            return ""
        try:
            return await self._memory.recall(
                ctx.memory_scope.owner, ctx.user_text, ctx.config.memory
            )
        except Exception as exc:
            log.warning("[Context] memory recall failed: %s", exc, exc_info=True)
            return ""

    async def _recall_rag(self, ctx: TurnContext) -> str:
        if self._rag is None or not ctx.config.rag.enabled:
            return ""
        try:
            found = await self._rag.query(ctx.user_text, ctx.memory_scope.owner, ctx.config)
        except Exception as exc:
            log.warning("[Context] RAG recall failed: %s", exc, exc_info=True)
            return ""
        if found:
            log.info("[Context] RAG context: %d chars", len(found))
        return found

    def render(self, ctx: TurnContext) -> str:
        """The prompt's sections; what came from outside (recalled long-term memory, a shared
        document) only inside fences (`bot/untrusted.py`), whose rule comes first, and the
        rolling summary with its heading-like lines escaped."""
        sections = [self._prompts.text()]
        tools = self._tools.enabled(
            ctx.config.tools, ctx.memory_scope.is_group or ctx.message.guest
        )
        shared = holds_document_parts(ctx.memory_pack)
        if ctx.rag_context or ctx.shared_document or tools or shared:
            sections.append(UNTRUSTED_RULE)  # tool results come fenced too
        # A part of a shared document the prompt holds already is left out of # Memory.
        in_prompt = f"{ctx.rag_context}\n{ctx.shared_document}"
        if memory := memory_section(ctx.memory_pack, in_prompt):
            sections.append(f"# Memory\n{memory}")
        if ctx.rag_context:
            sections.append(f"# Relevant Memory\n{fenced('memory', ctx.rag_context)}")
        if ctx.shared_document:
            sections.append(f"# Shared Document\n{fenced('document', ctx.shared_document)}")
        if ctx.skill:
            sections.append(f"# Active Skill: {ctx.skill}\n{ctx.skill_text}")
        if tools:
            lines = "\n".join(
                one_line(f"- {tool.name}: {tool.description}", TOOL_LINE_CHARS) for tool in tools
            )
            sections.append(f"# Available Tools\n{lines}")
        if self._skills is not None and any(t.name == SKILL_TOOL for t in tools):
            catalogue = self._skills.available()
            if catalogue:
                lines = "\n".join(f"- {s.name}: {s.description}" for s in catalogue)
                sections.append(f"# Available Skills\n{SKILLS_HINT}\n{lines}")
        if ctx.session.summary:  # the model's words, made from documents and tool results too
            summary = neutralised(ctx.session.summary)
            sections.append(f"# Earlier in This Conversation (summary)\n{summary}")
        return "\n\n".join(sections)
