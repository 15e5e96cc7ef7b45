"""Order 20: the system prompt, from prompt files, memory, long-term recall and tools."""

from __future__ import annotations

import asyncio
import logging

from bot.pipeline.context import TurnContext
from bot.ports.memory import MemoryRecall
from bot.ports.rag import RagRecall
from bot.prompts import PromptFiles
from bot.tools import ToolRegistry

log = logging.getLogger(__name__)


class ContextBuildingSystem:
    """Builds `ctx.system_prompt` in the spec's section order.

    Prompt files, then `# Memory` (short-term pack), `# Relevant Memory` (RAG), the active
    skill, `# Available Tools`, and the summary of this conversation's older turns. Memory
    and RAG are fetched concurrently; either one failing only leaves its section out.
    """

    name = "ContextBuilding"
    order = 20

    def __init__(
        self,
        prompts: PromptFiles,
        tools: ToolRegistry,
        memory: MemoryRecall | None = None,
        rag: RagRecall | None = None,
    ) -> None:
        self._prompts = prompts
        self._tools = tools
        self._memory = memory
        self._rag = rag

    def should_process(self, ctx: TurnContext) -> bool:
        return ctx.notice is None  # an earlier system already has the reply: no model call

    async def process(self, ctx: TurnContext) -> None:
        if self._memory is not None and self._rag is not None:
            ctx.memory_pack, ctx.rag_context = await asyncio.gather(
                self._recall_memory(ctx), self._recall_rag(ctx)
            )
        else:
            ctx.memory_pack = await self._recall_memory(ctx)
            ctx.rag_context = await self._recall_rag(ctx)
        ctx.system_prompt = self.render(ctx)

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
        sections = [self._prompts.text()]
        if ctx.memory_pack:
            sections.append(f"# Memory\n{ctx.memory_pack}")
        if ctx.rag_context:
            sections.append(f"# Relevant Memory\n{ctx.rag_context}")
        if ctx.shared_document:
            sections.append(f"# Shared Document\n{ctx.shared_document}")
        if ctx.skill:
            sections.append(f"# Active Skill: {ctx.skill}")
        tools = self._tools.enabled(ctx.config.tools)
        if tools:
            lines = "\n".join(f"- {tool.name}: {tool.description}" for tool in tools)
            sections.append(f"# Available Tools\n{lines}")
        if ctx.session.summary:
            sections.append(f"# Earlier in This Conversation (summary)\n{ctx.session.summary}")
        return "\n\n".join(sections)
