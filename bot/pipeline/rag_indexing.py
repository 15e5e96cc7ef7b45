"""Order 55: hand the exchange to the durable index queue; never waits on LightRAG itself."""

from __future__ import annotations

import logging

from bot.pipeline.context import TurnContext
from bot.ports.rag import IndexQueuePort
from bot.rag.documents import exchange_document
from bot.small_talk import is_trivial_exchange

log = logging.getLogger(__name__)


class RagIndexingSystem:
    """Queues every non-trivial exchange of a user who has not turned remembering off, owned
    by the turn's memory scope: the user in private, the group in a group."""

    name = "RagIndexing"
    order = 55

    def __init__(self, queue: IndexQueuePort) -> None:
        self._queue = queue

    def should_process(self, ctx: TurnContext) -> bool:
        return ctx.config.rag.enabled and ctx.remembering and ctx.final_text is not None

    async def process(self, ctx: TurnContext) -> None:
        answer = ctx.final_text or ""
        if is_trivial_exchange(ctx.user_text, answer, ctx.config.rag.index_min_length):
            log.info("[RagIndexing] Skipping trivial exchange")
            return
        document = exchange_document(
            owner=ctx.memory_scope.owner,
            chat_key=ctx.session.key,
            user_text=ctx.user_text,
            assistant_text=answer,
            at=ctx.message.received_at,
            skill=ctx.skill,
            speaker=speaker.name if (speaker := ctx.memory_scope.speaker) else None,
        )
        await self._queue.enqueue(document)
