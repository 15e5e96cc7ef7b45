"""`MemoryService` over a repository that goes away: what it refused waits, merged later.

PostgreSQL's outages are tested against a real server (tests/integration); here the service's
own part, without a server, over files that can be told to refuse (`StoreDown`)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime

import pytest

from bot.config.model import MemoryConfig
from bot.memory.file_repository import FileRepository
from bot.memory.model import ItemType, new_item
from bot.memory.repository import OwnerWrite, Question
from bot.memory.scoring import Candidates
from bot.memory.service import MemoryService
from bot.ports.health import StoreDown


class Refusing(FileRepository):
    """Files that refuse every write and recall while `down`."""

    down = False

    def writing(self, user_id: str, retry: bool = False) -> AbstractAsyncContextManager[OwnerWrite]:
        if self.down:
            raise StoreDown("memory items")
        return super().writing(user_id, retry)

    async def candidates(
        self, user_id: str, question: Question, now: datetime, config: MemoryConfig
    ) -> Candidates:
        if self.down:
            raise StoreDown("memory items")
        return await super().candidates(user_id, question, now, config)


@pytest.fixture
def repository(tmp_path, clock) -> Refusing:
    return Refusing(tmp_path / "memory", MemoryConfig, clock)


def service_over(repository: Refusing, clock, max_unwritten: int = 5_000) -> MemoryService:
    return MemoryService(repository, MemoryConfig, clock, max_unwritten=max_unwritten)


NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def fact(content: str, slot: str | None = None):
    return new_item(ItemType.FACT, content, source="test", confidence=0.5, now=NOW, key=slot)


async def test_while_the_store_is_away_recall_is_empty_and_items_wait(repository, clock):
    memory = service_over(repository, clock)
    await memory.add("ann", [fact("The user's name is Ann.")])
    assert "Ann" in await memory.recall("ann", "what is my name?")
    repository.down = True
    assert await memory.recall("ann", "what is my name?") == ""
    waiting = [fact("The user's staging server is at 10.0.0.5.")]
    assert await memory.add("ann", waiting) == waiting
    assert memory.unwritten() == 1
    assert await memory.count_for("ann") == 2  # the kept one and the one waiting

    repository.down = False
    await memory.retry_unwritten()
    assert memory.unwritten() == 0
    pack = await memory.recall("ann", "what is the IP of my staging server?")
    assert "10.0.0.5" in pack


async def test_a_waiting_repeat_merges_into_the_kept_item_once_back(repository, clock):
    memory = service_over(repository, clock)
    (kept,) = await memory.add("ann", [fact("The user lives in Porto.", "home")])
    repository.down = True
    await memory.add("ann", [fact("The user lives in Porto.", "home")])
    repository.down = False
    await memory.add("bob", [fact("The user likes tea.")])  # a write retries what waits
    assert memory.unwritten() == 0
    (item,) = await memory.live_items("ann")
    assert item.id == kept.id and item.confidence > kept.confidence


async def test_an_item_forgotten_while_waiting_never_comes_back(repository, clock):
    memory = service_over(repository, clock)
    repository.down = True
    (waiting,) = await memory.add("ann", [fact("The user's PIN is 4512.")])
    repository.down = False
    assert await memory.forget("ann", waiting.id) is None  # it was never stored
    await memory.retry_unwritten()
    assert await memory.count_for("ann") == 0


async def test_past_the_limit_the_owner_waiting_longest_loses_what_waits(repository, clock):
    memory = service_over(repository, clock, max_unwritten=2)
    repository.down = True
    await memory.add("ann", [fact("The user's name is Ann.")])
    await memory.add("bob", [fact("The user's name is Bob."), fact("The user likes tea.")])
    assert memory.unwritten() == 2
    repository.down = False
    await memory.retry_unwritten()
    assert await memory.count_for("ann") == 0
    assert await memory.count_for("bob") == 2
