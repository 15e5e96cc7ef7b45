"""Memory as each of its users sees it: one narrow protocol per consumer, all in this file.

Short-term memory (`MemoryService`, over files or, with `DATABASE_URL`, PostgreSQL)
implements most of them; the LLM extractor (`LlmFactExtractor`) the two about extraction;
every store that keeps something about a user (short-term items, LightRAG documents,
sessions, the Telegram inbox) `UserMemoryStore`.

    consumer                      protocol
    context building (order 20)   MemoryRecall
    memory persist (order 50)     ExchangeMemory, FactExtraction
    the `memory` tool             MemoryItemsPort, RememberingPreference
    a shared document's note      DocumentNotes
    LLM fact extraction           ExtractionTarget
    `/memory`, `/forget`          UserMemoryStore, BrowsableMemory, PendingExtraction
    `TurnRunner`                  RememberingPreference
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol, runtime_checkable

from bot.config.model import MemoryConfig
from bot.conversation import Speaker
from bot.memory.model import ItemType, MemoryItem, MemoryOverview, ScoredItem


class MemoryRecall(Protocol):
    async def recall(self, user_id: str, query: str, config: MemoryConfig) -> str:
        """The `# Memory` pack for this user and message, ranked and packed by `config` (the
        turn's snapshot); empty when there is nothing."""
        ...


class ExchangeMemory(Protocol):
    def remember_in_background(
        self,
        user_id: str,
        user_text: str,
        assistant_text: str | None,
        source: str,
        with_rules: bool = True,
        speaker: Speaker | None = None,
        *,
        config: MemoryConfig,
    ) -> object:
        """Start storing the exchange (and, `with_rules`, the facts the rules find in it) in
        the memory of `user_id` (a user or a group), as the turn's `config` says; `speaker`
        names who said it in a group. Must return at once and never raise for disk trouble."""
        ...


class FactExtraction(Protocol):
    def submit(self, user_id: str, user_text: str, source: str) -> None:
        """Queue the user's message for LLM fact extraction; returns at once."""
        ...


class MemoryItemsPort(Protocol):
    """One user's items, to add, search and forget one by one (the `memory` tool)."""

    @property
    def enabled(self) -> bool:
        """False while the operator has turned memory off (`memory.enabled`)."""
        ...

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]: ...

    async def add(self, user_id: str, new_items: list[MemoryItem]) -> list[MemoryItem]:
        """Store the items (merged into kept ones they repeat); returns them as stored."""
        ...

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user; None when the user has no such item."""
        ...


class DocumentNotes(Protocol):
    """Where a shared document's note and parts go (`bot/media/library.py`)."""

    async def add(self, user_id: str, new_items: list[MemoryItem]) -> list[MemoryItem]:
        """Store the items (merged into kept ones they repeat); returns them as stored."""
        ...

    async def keep_parts(self, user_id: str, parts: list[MemoryItem]) -> int:
        """Store a document's parts in batches, as one background write of the user that
        `/forget all` waits for; returns how many were stored."""
        ...


class RememberingPreference(Protocol):
    def is_remembering(self, user_id: str) -> bool:
        """False while the user has said `/remember off`; cheap enough to ask every turn."""
        ...


class ExtractionTarget(Protocol):
    """Where LLM fact extraction reads a user's items and applies its ADD / UPDATE / DELETE."""

    async def nearest(self, user_id: str, text: str, limit: int) -> list[MemoryItem]:
        """Up to `limit` facts and how-tos of this user that `text` may confirm or contradict."""
        ...

    async def add(self, user_id: str, new_items: list[MemoryItem]) -> list[MemoryItem]:
        """Store the items (merged into kept ones they repeat); returns them as stored."""
        ...

    async def replace(
        self, user_id: str, item_id: str, item_type: ItemType, content: str
    ) -> MemoryItem | None:
        """Give one item new wording and type under the same id; None when there is no such item."""
        ...

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user; None when the user has no such item."""
        ...


class BrowsableMemory(Protocol):
    """A user's items as `/memory` lists and searches them and `/forget <id>` deletes them,
    with what else holds the same words (`bot/memory/forgetting.py`)."""

    async def overview(self, user_id: str) -> MemoryOverview: ...

    async def search(self, user_id: str, query: str, limit: int = 8) -> list[ScoredItem]:
        """Items sharing words or meaning with `query`, best first, of every layer."""
        ...

    async def forget(self, user_id: str, item_id: str) -> MemoryItem | None:
        """Delete one item of this user; None when the user has no such item."""
        ...

    async def forget_many(self, user_id: str, item_ids: Collection[str]) -> list[MemoryItem]:
        """Delete these items of this user; returns those there were."""
        ...

    async def parts_of(self, user_id: str, document_id: str) -> list[MemoryItem]:
        """The parts of the shared document whose note has `document_id`, in order."""
        ...


class PendingExtraction(Protocol):
    """Messages waiting for LLM fact extraction: dropped before a user's memory is forgotten
    or remembering is turned off, so that nothing they said comes back afterwards."""

    async def discard(self, user_id: str) -> None: ...


@runtime_checkable
class LeavesTraces(Protocol):
    """A `UserMemoryStore` whose service keeps traces of what it deleted that the bot cannot
    reach: `/forget all` says so instead of promising more than it did."""

    def traces_left(self, user_id: str) -> str | None:
        """What may remain of what `forget_user(user_id)` just deleted, for the user; None
        when nothing does."""
        ...


@runtime_checkable
class ForgetsByWords(Protocol):
    """A `UserMemoryStore` that `/forget <id>` can search for the words of what it forgets
    (LightRAG's documents: the conversations that said a fact, a shared document's pieces)."""

    async def count_for(self, user_id: str) -> int: ...

    async def forget_holding(self, user_id: str, words: str, holds: Callable[[str], bool]) -> int:
        """Delete the user's entries a search for `words` finds and `holds` accepts; how many
        went. Raises when the store could not be searched or could not delete."""
        ...

    async def forget_shared_at(self, user_id: str, prefix: str) -> int:
        """Delete the user's entries whose name begins with `prefix`; how many went."""
        ...


class UserMemoryStore(Protocol):
    """A store that keeps something about a user, as the memory commands see it.

    `/memory` counts what each store holds for the asking user and `/forget all` empties every
    one of them, so a new kind of memory joins those commands by implementing this and being
    listed at the composition root.
    """

    label: str
    """What the store holds, for people: "long-term documents (LightRAG)"."""

    async def count_for(self, user_id: str) -> int:
        """How many entries this user has here."""
        ...

    async def forget_user(self, user_id: str) -> int:
        """Delete everything of this user here; returns how many entries went."""
        ...
