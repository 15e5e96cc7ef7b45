"""Where short-term memory keeps its items: the port `MemoryService` (`bot/memory/service.py`)
stores through, with two implementations, the per-user JSONL files
(`bot/memory/file_repository.py`) and PostgreSQL (`bot/adapters/postgres/memory.py`).

The service decides what is stored (merging a repeat into the item it repeats, promotion,
ranking, the items waiting for a database that is away, the question's vector and the items'
embedding); a repository only finds and keeps: the candidates for a question, one owner's
items under that owner's write lock, and the vectors of an embedding model. What differs
between the two (files hold a user's items in memory and rank them there; PostgreSQL asks for
candidates with SQL and locks an owner across processes) stays behind this port.

A stored TTL counts only while the config sets one (`bot/memory/retention.py`): with none, a
repository neither drops nor deletes an item by it, and clears it (the files when they load a
user, PostgreSQL per owner the first time a process uses that owner).

A repository that cannot be reached raises `StoreDown` (`bot/ports/health.py`): the service
keeps what it was to write and retries it later.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from bot.config.model import MemoryConfig
from bot.memory.model import MemoryItem
from bot.memory.scoring import Candidates
from bot.ports.embeddings import Vectors


class Embedded(NamedTuple):
    """A question's vector and the embedding model that made it."""

    model_id: str
    vector: Vectors


@dataclass(frozen=True)
class Question:
    """What a repository is given to find a question's candidates with."""

    text: str
    recall: bool
    """True for a turn's recall: a user's items still loading are waited for only briefly
    (files); False for a search, which waits for all of them."""
    embeds: bool
    """False when the service has no embedder or the recall's message is small talk that
    asks nothing (`worth_embedding`): `vector` is then None, not worth a task."""
    vector: Callable[[bool], Awaitable[Embedded | None]]
    """The question's vector, None for words alone; `True` first lets this user's items
    being embedded settle briefly (the repository knows some lack a vector)."""
    exchanges_stored: Callable[[], Awaitable[None]]
    """Waits for this user's exchanges still being stored in the background."""
    vectors_opened: Callable[[], None]
    """Tells the service that this user's vectors are open, so the missing ones fill."""


class OwnerWrite(Protocol):
    """One owner's items while the repository holds that owner's write lock."""

    async def kept(self, fingerprints: list[str], now: datetime) -> dict[str, MemoryItem]:
        """The live item kept under each of these fingerprints that has one."""
        ...

    async def get(self, item_id: str) -> MemoryItem | None:
        """The owner's item with this id, None when there is none."""
        ...

    async def put(self, items: list[MemoryItem], promoted_ids: set[str]) -> None:
        """Keep `items` (new, merged or reworded: by id); `promoted_ids` left their episodes."""
        ...

    async def tidy(self, now: datetime, max_episodes: int, expire: bool) -> None:
        """After a write: at most `max_episodes` episodes stay (the oldest go), and, when
        `expire` (the config sets a TTL), what expired may go."""
        ...


class MemoryRepository(Protocol):
    """Short-term memory items, per owner (a user or a group)."""

    async def candidates(
        self, user_id: str, question: Question, now: datetime, config: MemoryConfig
    ) -> Candidates:
        """The items that may answer `question`, for `rank_candidates`."""
        ...

    async def live_items(self, user_id: str, now: datetime) -> list[MemoryItem]:
        """The owner's items that have not expired."""
        ...

    async def count(self, user_id: str, now: datetime) -> int:
        """How many items of the owner have not expired."""
        ...

    async def recent_facts(self, user_id: str, now: datetime, limit: int) -> list[MemoryItem]:
        """The owner's newest and strongest facts and how-tos (`FACT_LAYERS`: no episodes, no
        parts of documents), `limit` of each at most, in no particular order."""
        ...

    def writing(self, user_id: str, retry: bool = False) -> AbstractAsyncContextManager[OwnerWrite]:
        """The owner's items under their write lock (`retry`: a write that waited for the
        store, tried even while it rests)."""
        ...

    async def forget_many(self, user_id: str, item_ids: Collection[str]) -> list[MemoryItem]:
        """Delete these items of the owner, their vectors too, in one write per file or one
        statement; returns those there were."""
        ...

    async def parts_of(self, user_id: str, document_id: str) -> list[MemoryItem]:
        """The parts of the shared document whose note has `document_id`
        (`bot/memory/documents.py`), in order."""
        ...

    async def forget_user(self, user_id: str) -> int:
        """Delete every item of the owner; returns how many went."""
        ...

    async def unembedded(self, user_id: str, model_id: str, limit: int) -> list[MemoryItem]:
        """Up to `limit` items of the owner lacking a vector of `model_id`; empty when there
        are none or they cannot be embedded yet."""
        ...

    async def store_vectors(
        self, user_id: str, model_id: str, batch: list[MemoryItem], vectors: Vectors
    ) -> None:
        """Keep the vectors of `batch` (an item reworded or forgotten meanwhile is skipped)."""
        ...

    def pending(self) -> list[Awaitable[object]]:
        """Work of the repository's own still running in the background."""
        ...
