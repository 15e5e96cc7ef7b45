"""What `/status` says about long-term memory, and why `answer` style may be refused."""

from __future__ import annotations

from collections.abc import Callable

from bot.config import RuntimeConfigStore
from bot.conversation.scope import MemoryScope
from bot.i18n.catalogue import notices as texts
from bot.ports.memory import UserMemoryStore
from bot.ports.rag import IndexQueueStore, RagHealthCheck
from bot.rag.style import answer_style_refusal, effective_style, refusal_notice


class RagStatus:
    """`OperatorStatusProvider`: server health (or circuit state), queue depth, the user's
    documents. Only operators see where the server is and what exactly is wrong with it."""

    def __init__(
        self,
        config: RuntimeConfigStore,
        rag: RagHealthCheck,
        queue: IndexQueueStore,
        documents: UserMemoryStore,
        owners: Callable[[], int] = lambda: 1,
    ) -> None:
        self._owners = owners
        self._config = config
        self._rag = rag
        self._queue = queue
        self._documents = documents

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        return await self._lines(scope, operator=False)

    async def operator_status_lines(self, scope: MemoryScope) -> list[str]:
        return await self._lines(scope, operator=True)

    async def _lines(self, scope: MemoryScope, operator: bool) -> list[str]:
        config = self._config.current()
        lines = []
        refusal = answer_style_refusal(config, self._owners()) if config.rag.enabled else None
        if config.rag.enabled:
            health = await self._rag.health()
            used = effective_style(config, self._owners(), scope.is_group)
            state = health.detail if operator else texts.rag_state(health.healthy)
            lines.append(texts.rag_line(state, used, config.rag.query_mode))
            count = await self._documents.count_for(scope.owner)
            lines.append(texts.rag_documents(scope.is_group, count))
        if config.rag.enabled or self._queue.depth:
            lines.append(texts.index_queue(self._queue.depth, self._queue.failed_count()))
        if refusal:
            lines.append(refusal_notice(refusal))
        return lines
