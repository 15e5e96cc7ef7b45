"""What `/status` says about long-term memory, and the shared-memory warning."""

from __future__ import annotations

from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.conversation.scope import MemoryScope
from bot.ports.rag import RagPort
from bot.ports.user_memory import UserMemoryStore
from bot.rag.queue import IndexQueue


def shared_memory_warning(config: RuntimeConfig) -> str | None:
    """In `answer` style LightRAG answers from every user's documents: say so plainly."""
    rag = config.rag
    if rag.enabled and rag.retrieval_style == "answer" and len(config.telegram.allowed_users) > 1:
        return (
            "⚠ rag.retrievalStyle is 'answer' and several users are allowed: LightRAG answers "
            "from everyone's documents, so long-term memory is shared between users. "
            "Use 'context' to keep each user's memories to that user."
        )
    return None


class RagStatus:
    """`OperatorStatusProvider`: server health (or circuit state), queue depth, the user's
    documents. Only operators see where the server is and what exactly is wrong with it."""

    def __init__(
        self,
        config: RuntimeConfigStore,
        rag: RagPort,
        queue: IndexQueue,
        documents: UserMemoryStore,
    ) -> None:
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
        if config.rag.enabled:
            health = await self._rag.health()
            style = f"{config.rag.retrieval_style} style, {config.rag.query_mode} mode"
            state = "healthy" if health.healthy else "not available"
            lines.append(f"LightRAG: {health.detail if operator else state} ({style})")
            count = await self._documents.count_for(scope.owner)
            whose = "This group's" if scope.is_group else "Your"
            lines.append(f"{whose} long-term documents: {count}")
        if config.rag.enabled or self._queue.depth:
            failed = self._queue.failed_count()
            extra = f", {failed} set aside" if failed else ""
            lines.append(f"Index queue: {self._queue.depth} waiting{extra}")
        warning = shared_memory_warning(config)
        if warning:
            lines.append(warning)
        return lines
