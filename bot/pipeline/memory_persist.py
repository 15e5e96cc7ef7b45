"""Order 50: store what the exchange holds (facts, and the exchange itself) in short-term memory."""

from __future__ import annotations

import logging
from typing import Protocol

from bot.pipeline.context import TurnContext

log = logging.getLogger(__name__)


class ExchangeMemory(Protocol):
    def remember_in_background(
        self,
        user_id: str,
        user_text: str,
        assistant_text: str | None,
        source: str,
        with_rules: bool = True,
    ) -> object:
        """Start storing the exchange (and, `with_rules`, the facts the rules find in it); must
        return at once and never raise for disk trouble."""
        ...


class FactExtraction(Protocol):
    def submit(self, user_id: str, user_text: str, source: str) -> None:
        """Queue the user's message for LLM fact extraction; returns at once."""
        ...


class MemoryPersistSystem:
    """Hands the finished exchange to memory and returns at once: the reply (order 60) never
    waits for extraction's disk writes, and a failure there is only logged. Facts come from
    the rules, from LLM extraction in the background, or both (`memory.extraction`).

    Nothing is stored without a final answer, while memory is disabled, or while the user has
    turned remembering off.
    """

    name = "MemoryPersist"
    order = 50

    def __init__(self, memory: ExchangeMemory, extraction: FactExtraction | None = None) -> None:
        self._memory = memory
        self._extraction = extraction

    def should_process(self, ctx: TurnContext) -> bool:
        return bool(ctx.config.memory.enabled and ctx.remembering and ctx.final_text)

    async def process(self, ctx: TurnContext) -> None:
        source = f"turn:{ctx.session.key}:{ctx.message.received_at:%Y%m%dT%H%M%S%f}"
        mode = ctx.config.memory.extraction if self._extraction is not None else "rules"
        try:
            self._memory.remember_in_background(
                ctx.user_id, ctx.user_text, ctx.final_text, source, with_rules=mode != "llm"
            )
            if self._extraction is not None and mode != "rules":
                self._extraction.submit(ctx.user_id, ctx.user_text, source)
        except Exception as exc:
            log.warning("[Memory] could not start storing the exchange: %s", exc)
