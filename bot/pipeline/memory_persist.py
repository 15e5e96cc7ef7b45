"""Order 50: store what the exchange holds (facts, and the exchange itself) in short-term memory."""

from __future__ import annotations

import logging

from bot.pipeline.context import TurnContext
from bot.ports.memory import ExchangeMemory, FactExtraction

log = logging.getLogger(__name__)


class MemoryPersistSystem:
    """Hands the finished exchange to memory and returns at once: the reply (order 60) never
    waits for extraction's disk writes, and a failure there is only logged. Facts come from
    the rules, from LLM extraction in the background, or both (`memory.extraction`).

    Facts come only from the sender's own words: a document's file name is not (`senders_words`).
    Everything goes to the turn's memory scope: the user's own memory in private, the group's
    in a group (the items then name the speaker). Nothing is stored without a final answer,
    while memory is disabled, or while the speaker has turned remembering off.
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
        scope = ctx.memory_scope
        speaker = scope.speaker
        own_words = _senders_words(ctx)
        try:
            self._memory.remember_in_background(
                scope.owner,
                own_words,
                ctx.final_text,
                source,
                with_rules=mode != "llm",
                speaker=speaker,
                config=ctx.config.memory,
            )
            if self._extraction is not None and mode != "rules":
                # In a group the model is told who spoke, so its facts name them.
                said = f"{speaker.name} says: {own_words}" if speaker else own_words
                self._extraction.submit(scope.owner, said, source)
        except Exception as exc:
            log.warning("[Memory] could not start storing the exchange: %s", exc)


def _senders_words(ctx: TurnContext) -> str:
    file = ctx.message.file
    return ctx.user_text if file is None else file.senders_words(ctx.user_text)
