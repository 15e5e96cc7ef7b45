"""What every short-term memory store promises (`bot/ports/memory.py`): a fact told is recalled
after a restart, by words and by meaning; a repeat is one item; one user never sees another's;
forgetting leaves nothing; an expired episode is gone. The JSONL files and PostgreSQL alike."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.documents import document_parts, part_id
from bot.memory.forgetting import forget_with_its_words
from bot.memory.model import ItemType, Layer, new_item
from tests.fakes.embeddings import FakeEmbedder


def item_lines(pack: str) -> list[str]:
    """The item lines of a `# Memory` pack, in order, without its day headings."""
    return [line for line in pack.splitlines() if line.startswith("- ")]


SERVER = "Remember that my staging server is at 10.0.0.5."


async def tell(store, user_id: str, *said: str) -> None:
    for at, words in enumerate(said):
        await store.remember_exchange(user_id, words, "Noted, thanks for telling me.", f"t:{at}")


async def test_a_fact_is_recalled_after_a_restart(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER)
    restarted = await new_memory_store()
    pack = await restarted.recall("ann", "What's the IP of my staging server?")
    assert "The user's staging server is at 10.0.0.5." in item_lines(pack)[0]
    assert (await restarted.overview("ann")).facts[0].layer is Layer.SEMANTIC


async def test_another_user_never_sees_nor_forgets_it(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER)
    (fact,) = (await store.overview("ann")).facts
    assert await store.recall("bob", "What's the IP of my staging server?") == ""
    assert await store.search("bob", "staging server") == []
    assert await store.nearest("bob", "staging server", 5) == []
    assert await store.forget("bob", fact.id) is None
    assert await store.count_for("bob") == 0
    assert await store.forget_user("bob") == 0
    assert next(s.item.id for s in await store.search("ann", "staging server")) == fact.id


async def test_a_repeat_is_one_item_more_confident(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER)
    first = (await store.overview("ann")).facts[0]
    await tell(store, "ann", "My staging server is at 10.0.0.5, remember.")
    (again,) = (await (await new_memory_store()).overview("ann")).facts
    assert again.id == first.id and again.confidence > first.confidence


async def test_a_keyed_fact_is_replaced_when_it_changes(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER, "My staging server is at 10.0.0.7 now.")
    (fact,) = (await (await new_memory_store()).overview("ann")).facts
    assert "10.0.0.7" in fact.content


async def test_forgetting_one_item_and_then_everything(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER, "I always deploy with docker compose on Fridays at noon")
    assert await store.count_for("ann") == 3  # the fact and two exchanges
    (fact,) = (await store.overview("ann")).facts
    assert (await store.forget("ann", fact.id)).content == fact.content
    assert "The user's staging server" not in await store.recall("ann", "staging server IP?")
    restarted = await new_memory_store()
    assert await restarted.count_for("ann") == 2
    assert await restarted.forget_user("ann") == 2
    assert await (await new_memory_store()).count_for("ann") == 0


async def test_replace_rewords_an_item_under_its_id(new_memory_store):
    store = await new_memory_store()
    (item,) = await store.add(
        "ann", [new_item(ItemType.FACT, "The user's bike is red", source="tool", confidence=0.9)]
    )
    new = await store.replace("ann", item.id, ItemType.PREFERENCE, "The user's bike is blue")
    assert new is not None and new.id == item.id
    assert await store.replace("bob", item.id, ItemType.FACT, "stolen") is None
    found = await (await new_memory_store()).search("ann", "bike colour blue")
    assert [(s.item.id, s.item.type) for s in found] == [(item.id, ItemType.PREFERENCE)]


async def test_an_expired_episode_is_neither_recalled_nor_counted(new_memory_store, memory_clock):
    with_ttl = MemoryConfig(episodicTtlDays=90)
    store = await new_memory_store(config=with_ttl)
    await tell(store, "ann", "We moved the billing database to a new cluster, the replica lags")
    assert "billing" in await store.recall("ann", "billing database replica lags")
    memory_clock.now += timedelta(days=100)  # past the episodes' 90 days
    restarted = await new_memory_store(config=with_ttl)
    assert await restarted.recall("ann", "billing database replica lags") == ""
    assert await restarted.count_for("ann") == 0


async def test_by_default_an_episode_is_recalled_a_year_later(new_memory_store, memory_clock):
    store = await new_memory_store()
    await tell(store, "ann", "We moved the billing database to a new cluster, the replica lags")
    memory_clock.now += timedelta(days=365)
    restarted = await new_memory_store()
    assert "billing" in await restarted.recall("ann", "billing database replica lags")
    assert await restarted.count_for("ann") == 1


async def test_a_stored_ttl_counts_no_more_once_the_config_sets_none(
    new_memory_store, memory_clock
):
    """Episodes stored under the old 90-day default keep that TTL on disk; with
    `episodicTtlDays` null they are kept, their TTL cleared for good: a later config that sets
    a TTL again applies it to new episodes only."""
    with_ttl = MemoryConfig(episodicTtlDays=90)
    store = await new_memory_store(config=with_ttl)
    await tell(store, "ann", "We moved the billing database to a new cluster, the replica lags")
    memory_clock.now += timedelta(days=100)  # past the stored 90 days
    restarted = await new_memory_store()
    assert await restarted.count_for("ann") == 1
    assert "billing" in await restarted.recall("ann", "billing database replica lags")
    await tell(restarted, "ann", "The new cluster runs in Frankfurt with three nodes now")
    assert "billing" in await restarted.recall("ann", "billing database replica lags")
    memory_clock.now += timedelta(days=100)
    again = await new_memory_store(config=with_ttl)
    assert await again.count_for("ann") == 2, "cleared for good, not only ignored"
    assert "billing" in await again.recall("ann", "billing database replica lags")


async def test_a_question_in_other_words_finds_the_fact_by_meaning(new_memory_store, e5):
    store = await new_memory_store(e5)
    await tell(
        store, "ann", "btw my sister Olga lives in Porto", "I bought a new bike for commuting"
    )
    await store.recall("ann", "warm up")  # the file store opens its vectors on a first recall
    await store.drain()
    restarted = await new_memory_store(e5)
    await restarted.recall("ann", "warm up")
    await restarted.drain()
    pack = await restarted.recall("ann", "which town is my sibling based in?")
    assert "Porto" in item_lines(pack)[0]
    assert await restarted.recall("bob", "which town is my sibling based in?") == ""


async def test_a_message_is_embedded_once_for_its_recall_and_its_storing(new_memory_store):
    """The exchange is stored in the words its recall embedded: that vector is the item's."""
    embedder = FakeEmbedder()
    store = await new_memory_store(embedder)
    await tell(store, "ann", "btw my sister Olga lives in Porto")
    await store.recall("ann", "warm up")
    await store.drain()
    said = "we adopted a beagle puppy last spring, her name is Biscuit"
    await store.recall("ann", said)
    await tell(store, "ann", said)
    await store.drain()
    assert embedder.embedded.count(said) == 1
    assert "Biscuit" in await store.recall("ann", "what is our hound called?")


async def test_small_talk_that_asks_nothing_is_recalled_without_embedding(new_memory_store):
    embedder = FakeEmbedder()
    store = await new_memory_store(embedder)
    await tell(store, "ann", "I make fresh pasta every sunday with my kids")
    await store.recall("ann", "warm up")
    await store.drain()
    before = len(embedder.embedded)
    assert "pasta" in await store.recall("ann", "just made pasta, nothing fancy")
    await store.recall("ann", "where am I from?")
    assert embedder.embedded[before:] == ["where am I from?"]


async def test_extraction_sees_the_facts_a_message_may_correct(new_memory_store):
    store = await new_memory_store()
    await tell(store, "ann", SERVER, "My name is Ann.")
    found = await store.nearest("ann", "my staging server moved to 10.0.0.9", 5)
    assert found and "staging server" in found[0].content
    assert all(item.layer is not Layer.EPISODIC for item in found)
    assert any("Ann" in item.content for item in found)


async def test_words_with_quotes_and_backslashes_are_found_as_they_are(new_memory_store):
    store = await new_memory_store()
    note = "The user's wifi password is ss'w\\rd at O'Neil's place"
    await store.add("ann", [new_item(ItemType.FACT, note, source="tool", confidence=0.9)])
    found = await (await new_memory_store()).search("ann", "o'neil ss'w")
    assert [s.item.content for s in found] == [note]
    assert await store.search("ann", "' \\ | & ! ( ) :*") == []


def a_document(document_id: str, parts: int, *, at=None):
    """A shared document's parts, each naming its number ("clause 7 of the lease")."""
    pieces = [f"Clause {n} of the lease: the tenant waters plant number {n}." for n in range(parts)]
    return document_parts(document_id, pieces, at or utc_now(), 0.6)


async def test_a_documents_parts_are_recalled_and_forgotten_with_its_note(new_memory_store):
    store = await new_memory_store()
    (note,) = await store.add(
        "ann", [new_item(ItemType.FACT, "The user shared a lease.", source="t", confidence=0.6)]
    )
    assert await store.keep_parts("ann", a_document(note.id, 40)) == 40
    assert await store.keep_parts("bob", a_document("0123456789", 2)) == 2
    restarted = await new_memory_store()
    assert "plant number 17." in await restarted.recall("ann", "which tenant waters plant 17?")
    overview = await restarted.overview("ann")
    assert [fact.id for fact in overview.facts] == [note.id]
    assert (overview.document_parts, overview.episodes) == (40, 0)
    parts = await restarted.parts_of("ann", note.id)
    assert [part.id for part in parts] == [part_id(note.id, n) for n in range(1, 41)]
    assert await restarted.parts_of("bob", note.id) == []

    gone = await forget_with_its_words(restarted, "ann", note.id)
    assert gone is not None and gone.parts == 40
    again = await new_memory_store()
    assert await again.count_for("ann") == 0
    assert await again.recall("ann", "which tenant waters plant 17?") == ""
    assert await again.count_for("bob") == 2, "another user's document stays"


async def test_forgetting_a_fact_forgets_the_snippets_that_said_it(new_memory_store):
    store = await new_memory_store()
    await tell(
        store,
        "ann",
        "btw my sister Olga lives in Porto and paints tiles",
        "I repeat it: my sister Olga lives in Porto, near the river",
        "We deploy the billing service with docker compose every Friday",
    )
    fact = next(f for f in (await store.overview("ann")).facts if "Olga" in f.content)
    gone = await forget_with_its_words(store, "ann", fact.id)
    assert gone is not None and len(gone.snippets) == 2
    restarted = await new_memory_store()
    assert "Porto" not in await restarted.recall("ann", "where does my sister Olga live? Porto?")
    assert [s.item.content for s in await restarted.search("ann", "Olga Porto sister")] == []
    assert "docker compose" in await restarted.recall("ann", "how do we deploy billing?")


async def test_forgetting_everything_in_the_middle_of_a_document_leaves_nothing(
    new_memory_store,
):
    store = await new_memory_store()
    upload = asyncio.create_task(store.keep_parts("ann", a_document("abcdef0123", 300)))
    await asyncio.sleep(0)  # the first batch is being written
    await store.forget_user("ann")
    assert upload.done(), "forgetting waited for the parts on their way"
    assert await store.count_for("ann") == 0
    assert await (await new_memory_store()).count_for("ann") == 0
