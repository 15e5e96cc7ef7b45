"""Semantic recall: vectors beside the items, fused with words, and what happens when the
embeddings are down, the model changes, or an item is forgotten."""

import asyncio
import logging
import os
import stat
import threading
from datetime import UTC, datetime

import numpy as np
import pytest

from bot.config.model import EmbeddingsConfig, MemoryConfig
from bot.memory.episodes import episode
from bot.memory.file_repository import file_memory
from bot.memory.model import ItemType, new_item
from bot.memory.scoring import nearest_in_meaning, word_matches
from bot.memory.semantic import AskedBefore
from bot.memory.vectors import VectorFile, VectorIndex
from bot.ports.embeddings import cosines, unit_rows
from tests.fakes.embeddings import FakeEmbedder, embeddings_down


def item_lines(pack: str) -> list[str]:
    """The item lines of a `# Memory` pack, in order, without its day headings."""
    return [line for line in pack.splitlines() if line.startswith("- ")]


NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FACT = "btw my sister Olga lives in Porto"


@pytest.fixture
def embedder():
    return FakeEmbedder()


def memory_over(root, embedder, timer, **config):
    return file_memory(
        root, lambda: MemoryConfig(**config), lambda: NOW, embedder=embedder, timer=timer
    )


@pytest.fixture
def semantic_memory(tmp_path, embedder, timer):
    return memory_over(tmp_path / "memory", embedder, timer)


async def tell(semantic_memory, *said):
    for at, words in enumerate(said):
        await semantic_memory.remember_exchange(
            "u", words, "Thanks for telling me, noted.", f"turn:a:{at}"
        )
    await semantic_memory.drain()


async def test_a_question_in_other_words_finds_the_fact(semantic_memory):
    await tell(semantic_memory, FACT, "I bought a new bike for commuting in spring")
    await semantic_memory.recall("u", "warm up")  # opens the user's vectors, embeds what is stored
    await semantic_memory.drain()
    pack = await semantic_memory.recall("u", "which town is my sibling based in?")
    assert "Porto" in item_lines(pack)[0]


async def test_a_paraphrase_never_finds_another_users_fact(semantic_memory):
    """Meaning matches across everything alike, so only the asker's vectors may be searched."""
    await tell(semantic_memory, FACT)
    await semantic_memory.remember_exchange(
        "v", "I bought a new bike for commuting", "Nice!", "turn:b:0"
    )
    await semantic_memory.drain()
    for user in ("u", "v"):
        await semantic_memory.recall(user, "warm up")
    await semantic_memory.drain()
    assert "Porto" in await semantic_memory.recall("u", "which town is my sibling based in?")
    assert "Porto" not in await semantic_memory.recall("v", "which town is my sibling based in?")


async def test_without_embeddings_the_same_question_finds_nothing(tmp_path, timer):
    semantic_memory = file_memory(tmp_path / "m", MemoryConfig, lambda: NOW)
    await tell(semantic_memory, FACT)
    assert "Porto" not in await semantic_memory.recall("u", "which town is my sibling based in?")


async def test_embeddings_down_recall_answers_by_words_and_embeds_later(
    semantic_memory, embedder, timer, caplog
):
    embedder.failing = embeddings_down()
    await tell(semantic_memory, FACT)
    with caplog.at_level(logging.WARNING):
        assert "Porto" in await semantic_memory.recall("u", "where does my sister live?")
        assert "Porto" in await semantic_memory.recall("u", "where does my sister live?")
    warnings = [r for r in caplog.records if "embeddings failed" in r.getMessage()]
    assert len(warnings) == 1  # resting after the failure: the second recall did not try
    assert embedder.calls == 1

    embedder.failing = None
    timer.now += 60  # the rest is over
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    assert any("sister" in text for text in embedder.embedded)
    assert "Porto" in await semantic_memory.recall("u", "which town is my sibling based in?")


async def test_vectors_persist_so_a_restart_embeds_only_the_question(
    tmp_path, semantic_memory, embedder, timer
):
    await tell(semantic_memory, FACT, "we have a beagle called Biscuit")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    fresh = FakeEmbedder()
    reopened = memory_over(semantic_memory.repository.root, fresh, timer)
    pack = await reopened.recall("u", "what is our hound called?")
    await reopened.drain()
    assert "Biscuit" in pack
    assert fresh.embedded == ["what is our hound called?"]  # the question only, no item


async def test_after_a_restart_a_users_vectors_are_read_with_their_items(
    tmp_path, semantic_memory, timer
):
    """Loading a user reads their vectors too, so their first recall need not."""
    await tell(semantic_memory, FACT, "we have a beagle called Biscuit")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    fresh = FakeEmbedder()
    reopened = memory_over(semantic_memory.repository.root, fresh, timer)
    assert await reopened.count_for("u") > 0  # loads the user, and nothing else
    await reopened.drain()
    for file in VectorFile.every(semantic_memory.repository.root / "u-u"):
        file.path.unlink()  # what was read with the items is all there is now
    assert "Biscuit" in await reopened.recall("u", "what is our hound called?")
    assert fresh.embedded == ["what is our hound called?"]


async def test_a_user_with_nothing_stored_is_answered_without_embedding_the_question(
    semantic_memory, embedder
):
    assert await semantic_memory.recall("u", "where does my sister live?") == ""
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "where does my sister live?")
    await semantic_memory.drain()
    assert "where does my sister live?" in embedder.embedded
    assert embedder.embedded.count("where does my sister live?") == 1, "only once there were items"


async def test_a_new_model_re_embeds_in_the_background_and_drops_the_old_vectors(
    tmp_path, semantic_memory, timer
):
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    folder = tmp_path / "memory" / "u-u" / "vectors"
    (old_file,) = folder.iterdir()
    other = FakeEmbedder(model_id="fake:another")
    switched = memory_over(semantic_memory.repository.root, other, timer)
    await switched.recall("u", "which town is my sibling based in?")
    await switched.drain()
    assert any("sister" in text for text in other.embedded)
    assert [path.name for path in folder.iterdir()] != [old_file.name]
    assert len(list(folder.iterdir())) == 1


async def test_a_changed_wording_is_embedded_again(semantic_memory, embedder):
    await tell(semantic_memory, "My server is at 10.0.0.5.")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    await tell(semantic_memory, "My server is at 10.0.0.7 now.")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    facts = [text for text in embedder.embedded if text.startswith("The user's server")]
    assert facts == ["The user's server is at 10.0.0.5.", "The user's server is at 10.0.0.7 now."]


async def test_forgetting_an_item_deletes_its_vector_from_disk(tmp_path, semantic_memory):
    await tell(semantic_memory, FACT, "we have a beagle called Biscuit")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    item, *_ = [i for i in await semantic_memory.live_items("u") if "Olga" in i.content]
    await semantic_memory.forget("u", item.id)
    for file in VectorFile.every(tmp_path / "memory" / "u-u"):
        raw = file.path.read_bytes()
        assert item.id.encode() not in raw and len(raw) > 0


async def test_forget_all_while_embedding_leaves_no_vector_file(
    tmp_path, semantic_memory, embedder
):
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.forget_user("u")
    await semantic_memory.drain()
    assert not (tmp_path / "memory" / "u-u").exists()


async def test_profile_facts_come_after_what_the_question_is_about(semantic_memory):
    await semantic_memory.add(
        "u",
        [
            new_item(
                ItemType.IDENTITY, f"The user is fact number {n}.", source="t", confidence=0.95
            )
            for n in range(5)
        ],
    )
    await tell(semantic_memory, "we have a beagle called Biscuit")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    lines = item_lines(await semantic_memory.recall("u", "what is our dog called?"))
    assert "Biscuit" in lines[0]
    assert sum("fact number" in line for line in lines) <= 3


def test_vector_file_drops_a_record_cut_short_and_keeps_the_rest_aligned(tmp_path):
    file = VectorFile.of(tmp_path, "fake:x", 4)
    file.append(["a", "b"], np.eye(4, dtype=np.float32)[:2])
    with open(file.path, "ab") as raw:
        raw.write(b"partial record")  # a crash in the middle of an append
    file.append(["c"], np.eye(4, dtype=np.float32)[2:3])
    ids, vectors = file.load({"a", "b", "c"})
    assert ids == ["a", "b", "c"]
    assert vectors[2].tolist() == [0, 0, 1, 0]


def test_vector_file_keeps_the_last_record_of_an_id_and_only_wanted_ids(tmp_path):
    file = VectorFile.of(tmp_path, "fake:x", 2)
    file.append(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
    file.append(["a"], np.array([[0, 1]], dtype=np.float32))
    ids, vectors = file.load({"a"})
    assert ids == ["a"] and vectors[0].tolist() == [0, 1]
    assert file.path.stat().st_size == file.load({"a"})[1].shape[0] * (16 + 2 * 2)


def test_vector_index_finds_the_nearest_and_forgets():
    index = VectorIndex("m")
    index.put_many(["x", "y"], np.array([[1, 0], [0.6, 0.8]], dtype=np.float32))
    assert list(index.nearest(np.array([1, 0], dtype=np.float32), 2)) == ["x", "y"]
    index.remove("x")
    assert list(index.nearest(np.array([1, 0], dtype=np.float32), 2)) == ["y"]


def test_cosines_are_the_dot_products_of_unit_rows_whatever_the_query_type():
    rows = unit_rows(np.random.default_rng(7).normal(size=(50, 16)))
    for query in (rows[3], rows[3].astype(np.float64), rows[3:4]):
        found = cosines(rows, query)
        assert found.dtype == np.float32 and found.shape == (50,)
        assert np.allclose(found, rows @ rows[3], atol=1e-6)
    assert int(np.argmax(found)) == 3


def test_cosines_of_16_bit_codes_over_several_blocks_are_their_float_products():
    codes = np.random.default_rng(8).integers(-32767, 32767, size=(2500, 16), dtype=np.int16)
    query = unit_rows(np.random.default_rng(9).normal(size=(1, 16)))[0]
    found = cosines(codes, query)
    assert found.dtype == np.float32 and found.shape == (2500,)
    assert np.allclose(found, codes.astype(np.float64) @ query, rtol=1e-5, atol=1e-2)


def test_embeddings_config_defaults_to_the_bundled_model():
    assert EmbeddingsConfig().provider == "embedded"


def test_vector_files_are_for_the_bots_user_only(tmp_path):
    previous = os.umask(0o022)
    try:
        VectorFile.of(tmp_path / "u-x", "fake:x", 2).append(
            ["a"], np.array([[1, 0]], dtype=np.float32)
        )
    finally:
        os.umask(previous)
    folder = tmp_path / "u-x" / "vectors"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [stat.S_IMODE(path.stat().st_mode) for path in folder.iterdir()] == [0o600]


def test_a_vector_of_wording_changed_while_embedding_is_not_taken_in():
    from bot.memory.user_items import UserItems

    items = UserItems()
    items.open_vectors(VectorIndex("m", 2))
    first = new_item(ItemType.FACT, "The user's server is at 10.0.0.5.", source="t", confidence=0.9)
    items.put(first)
    (batch_item,) = items.without_vectors(10)
    items.put(first.model_copy(update={"content": "The user's server is at 10.0.0.7."}))
    ids, _ = items.embedded([batch_item], np.array([[1, 0]], dtype=np.float32))
    assert ids == []
    assert [item.content for item in items.without_vectors(10)] == [
        "The user's server is at 10.0.0.7."
    ]


async def test_a_question_asked_again_is_not_embedded_again(semantic_memory, embedder):
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    question = "which town is my sibling based in?"
    for _ in range(2):
        assert "Porto" in item_lines(await semantic_memory.recall("u", question))[0]
    assert embedder.embedded.count(question) == 1


async def test_a_message_is_embedded_once_for_its_recall_and_its_storing(semantic_memory, embedder):
    """The exchange is stored in the words its recall embedded: that vector is the item's."""
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    said = "we adopted a beagle puppy last spring, her name is Biscuit"
    await semantic_memory.recall("u", said)
    await semantic_memory.remember_exchange("u", said, "Congratulations, noted!", "turn:a:9")
    await semantic_memory.drain()
    assert embedder.embedded.count(said) == 1
    [item] = [i for i in await semantic_memory.live_items("u") if "Biscuit" in i.content]
    [file] = VectorFile.every(semantic_memory.repository.root / "u-u")
    ids, vectors = file.load({item.id})
    assert ids == [item.id]  # the question's vector, kept as the item's
    assert np.allclose(vectors[0], (await FakeEmbedder().embed([said]))[0], atol=1e-3)
    assert "Biscuit" in await semantic_memory.recall("u", "what is our hound called?")


async def test_of_items_stored_together_only_those_not_asked_go_to_the_model(
    semantic_memory, embedder
):
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    asked = "we adopted a beagle puppy last spring, her name is Biscuit"
    await semantic_memory.recall("u", asked)
    before = len(embedder.embedded)
    fact = new_item(
        ItemType.FACT,
        "The user's wife works as a pediatrician.",
        source="t",
        confidence=0.9,
        now=NOW,
    )
    await semantic_memory.add("u", [episode(asked, "Lovely!", "turn:a:9", NOW, None), fact])
    await semantic_memory.drain()
    assert embedder.embedded[before:] == [fact.content]
    assert "Biscuit" in await semantic_memory.recall("u", "what is our hound called?")
    assert "pediatrician" in await semantic_memory.recall("u", "what does my spouse do?")


async def test_small_talk_that_asks_nothing_is_recalled_by_words_without_embedding(
    semantic_memory, embedder
):
    await tell(semantic_memory, FACT, "I make fresh pasta every sunday with my kids")
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    before = len(embedder.embedded)
    assert "pasta" in await semantic_memory.recall("u", "just made pasta, nothing fancy")
    await semantic_memory.recall("u", "ok cool")
    await semantic_memory.drain()
    assert embedder.embedded[before:] == []
    for question in ("what about you?", "why", "where am I from"):  # small talk's words
        await semantic_memory.recall("u", question)
    assert embedder.embedded[before:] == ["what about you?", "why", "where am I from"]


async def test_a_question_asked_again_after_a_model_change_is_embedded_by_the_new_model(
    tmp_path, timer
):
    embedders = {"old": FakeEmbedder("fake:old"), "new": FakeEmbedder("fake:new")}
    current = {"model": "old"}

    class Switching:
        @property
        def model_id(self):
            return embedders[current["model"]].model_id

        async def embed(self, texts):
            return await embedders[current["model"]].embed(texts)

    semantic_memory = memory_over(tmp_path / "m", Switching(), timer)
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "where is my sibling based?")
    current["model"] = "new"
    await semantic_memory.recall("u", "where is my sibling based?")
    await semantic_memory.drain()
    assert embedders["new"].embedded.count("where is my sibling based?") == 1


def test_questions_asked_before_keep_the_latest_few_by_model():
    asked = AskedBefore(2)
    one, two, three = (np.full(3, n, dtype=np.float32) for n in (1, 2, 3))
    asked.put("m", "one", one)
    asked.put("m", "two", two)
    assert asked.get("m", "one") is one  # now the latest asked
    asked.put("m", "three", three)
    assert asked.get("m", "two") is None
    assert asked.get("m", "one") is one and asked.get("m", "three") is three
    assert asked.get("other model", "one") is None
    asked.put("m", "long" * 1000, three)
    assert asked.get("m", "long" * 1000) is None  # a pasted page is not kept
    assert asked.get("m", "three") is three
    with pytest.raises(ValueError):
        one[0] = 5  # shared by later recalls: nobody may change it


async def test_the_question_is_handed_to_the_embedder_before_words_are_matched(
    tmp_path, timer, monkeypatch
):
    """Word matching runs on the loop while a thread embeds: the recall pays the longer."""
    order: list[str] = []

    class Recording(FakeEmbedder):
        async def embed(self, texts):
            order.append(f"embed {texts[0]}")
            await asyncio.sleep(0)  # a thread would be busy with it meanwhile
            return await super().embed(texts)

    from bot.memory import file_repository as service

    def matching(items, query):
        order.append(f"words {query}")
        return word_matches(items, query)

    monkeypatch.setattr(service, "word_matches", matching)
    semantic_memory = memory_over(tmp_path / "m", Recording(), timer)
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")  # opens the user's vectors, embeds what is stored
    await semantic_memory.drain()
    order.clear()
    pack = await semantic_memory.recall("u", "which town is my sibling based in?")
    assert "Porto" in pack
    assert order[:2] == [
        "embed which town is my sibling based in?",
        "words which town is my sibling based in?",
    ]


def test_a_search_taken_now_is_not_changed_by_later_writes_to_the_index():
    index = VectorIndex("m")
    index.put_many(["x", "y"], np.array([[1, 0], [0.6, 0.8]], dtype=np.float32))
    search = index.search_as_now()
    index.remove("x")
    for n in range(100):  # grows the matrix, then compacts it
        index.put(f"new{n}", np.array([1, 0], dtype=np.float32))
    for n in range(100):
        index.remove(f"new{n}")
    assert list(search(np.array([1, 0], dtype=np.float32), 5)) == ["x", "y"]
    assert list(index.nearest(np.array([1, 0], dtype=np.float32), 5)) == ["y"]


@pytest.mark.parametrize("threshold, in_thread", [(1, True), (10_000, False)])
async def test_a_large_users_vectors_are_searched_off_the_event_loop(
    semantic_memory, monkeypatch, threshold, in_thread
):
    from bot.memory import file_repository as service

    searched_in: list[threading.Thread] = []

    def recording(search, vector):
        searched_in.append(threading.current_thread())
        return nearest_in_meaning(search, vector)

    monkeypatch.setattr(service, "nearest_in_meaning", recording)
    monkeypatch.setattr(service, "SEARCH_IN_THREAD_FROM", threshold)
    await tell(semantic_memory, FACT)
    await semantic_memory.recall("u", "warm up")
    await semantic_memory.drain()
    searched_in.clear()
    assert "Porto" in await semantic_memory.recall("u", "which town is my sibling based in?")
    found = await semantic_memory.search("u", "my sibling")
    assert "Porto" in found[0].item.content
    assert len(searched_in) == 2
    assert all((thread is not threading.main_thread()) == in_thread for thread in searched_in)
