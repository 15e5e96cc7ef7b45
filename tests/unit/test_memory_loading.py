"""Cold start: a bulk load that equals the item-by-item one, a first recall that does not wait
for a heavy user's episodes, writes that wait for the load, and the collector kept quiet."""

import asyncio
import gc
import logging
import random
import threading
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from bot import runtime
from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.files import UserFiles
from bot.memory.model import ItemType, Layer, MemoryItem, new_item
from bot.memory.packing import pack
from bot.memory.scoring import rank
from bot.memory.text import _words_terms, tokens
from bot.memory.user_items import UserItems
from bot.memory.vectors import VectorIndex

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NAME = "The user's name is Marta Kowalski."
HOWTO = "To restart nginx, run `sudo systemctl restart nginx`."
EPISODE = "User: my postgres backup failed again tonight → Assistant: check the cron log."
QUERY = "postgres backup failed again tonight; restart nginx"
QUERIES = ["postgres backup", "restart nginx", "Marta", "kayak trip to Bergen", "cron log"]
WORDS = "nginx postgres backup cron kayak Bergen restart deploy docker-compose it's 10.0.0.5"


def items_put_one_by_one(items):
    """The old way to load: one `put` after another."""
    built = UserItems()
    for item in items:
        built.put(item)
    return built


def varied_items(count, seed=3):
    rng = random.Random(seed)
    words = WORDS.split()
    kinds = [ItemType.FACT, ItemType.IDENTITY, ItemType.HOWTO, ItemType.EXCHANGE]
    found = []
    for n in range(count):
        kind = rng.choice(kinds)
        content = " ".join(rng.choices(words, k=rng.randint(2, 8)))
        found.append(
            new_item(
                kind,
                content,
                source=f"turn:a:{n}",
                confidence=rng.choice([0.5, 0.7, 0.9]),
                now=NOW - timedelta(hours=n),
                ttl_days=90 if kind is ItemType.EXCHANGE else None,
            )
        )
    return found


def same_state(bulk, one_by_one):
    assert list(bulk.items) == list(one_by_one.items)
    for query in QUERIES:
        terms = tokens(query)
        assert bulk.lexical(terms) == one_by_one.lexical(terms)
        assert rank(bulk, query, NOW, MemoryConfig()) == rank(
            one_by_one, query, NOW, MemoryConfig()
        )
    for per_layer in (1, 3, 100):
        assert bulk.newest(per_layer) == one_by_one.newest(per_layer)
        assert bulk.strongest(per_layer) == one_by_one.strongest(per_layer)
    for item in one_by_one:
        assert bulk.by_fingerprint(item.fingerprint) == one_by_one.by_fingerprint(item.fingerprint)
    everything = len(one_by_one) + 1
    assert bulk.newest(everything) == one_by_one.newest(everything)


# -- the bulk build equals putting items one by one ------------------------------------------


def test_tokens_of_a_text_are_those_of_its_words_seen_first_or_cached():
    texts = [
        "User: How do I restart nginx? → Assistant: Run `sudo systemctl restart nginx`.",
        "My server is at 10.0.0.5, it's docker-compose.yaml (the user's).",
        "ΟΔΟΣ ΣΟΦΟΣ; Меня зовут Марта, я живу в Москве.",
        "tabs\tand\nnew lines\u00a0and O'Reilly's e.g. self-hosting",
    ]
    for text in texts:
        expected = _words_terms(text.lower())
        assert tokens(text) == expected  # chunks seen for the first time
        assert tokens(text) == expected  # and from the cache


def test_bulk_built_items_equal_items_put_one_by_one(monkeypatch):
    monkeypatch.setattr("bot.memory.user_items.SORT_STEP", 4)  # sorted runs, merged
    items = varied_items(60)  # same words, same fingerprint: later ones win it, as with put
    bulk, one_by_one = UserItems.of(items), items_put_one_by_one(items)
    same_state(bulk, one_by_one)

    changed = items[5].model_copy(update={"content": "kayak trip to Bergen", "title": "kayak"})
    for built in (bulk, one_by_one):
        built.remove(items[0].id)
        built.put(changed)
    same_state(bulk, one_by_one)


def test_bulk_build_refuses_a_repeated_id():
    item = varied_items(1)[0]
    with pytest.raises(ValueError):
        UserItems.of([item, item])


def test_vector_index_built_at_once_equals_one_put_at_a_time():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(70, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"id{n}" for n in range(70)]
    at_once = VectorIndex.of("model", 8, ids, vectors)
    one_by_one = VectorIndex("model", 8)
    one_by_one.put_many(ids, vectors)
    for query in vectors[:5]:
        assert at_once.nearest(query, 10) == one_by_one.nearest(query, 10)
    for index in (at_once, one_by_one):
        index.remove("id3")
        index.put("id70", vectors[3])
    assert at_once.nearest(vectors[3], 3) == one_by_one.nearest(vectors[3], 3)
    assert len(VectorIndex.of("model", 8, [], np.zeros((0, 8), dtype=np.float32))) == 0


async def test_a_reopened_memory_recalls_what_items_put_one_by_one_would(tmp_path):
    root = tmp_path / "memory"
    writer = file_memory(root, MemoryConfig, lambda: NOW)
    for batch in range(4):  # repeats merge: files hold several versions of some ids
        await writer.add("u", varied_items(40, seed=batch % 2))
    reopened = file_memory(root, MemoryConfig, lambda: NOW)
    recalled = {query: await reopened.recall("u", query) for query in QUERIES}

    one_by_one = items_put_one_by_one(UserFiles(root, "u").load(NOW))
    assert [item.id for item in await reopened.live_items("u")] == list(one_by_one.items)
    config = MemoryConfig()
    for query in QUERIES:
        assert recalled[query] == pack(rank(one_by_one, query, NOW, config), config).text()
    assert sum(bool(text) for text in recalled.values()) >= 3


def test_facts_and_howtos_are_handed_over_first_and_win_over_episodic_lines(tmp_path):
    fact = new_item(ItemType.FACT, "The user deploys with Docker.", source="t", confidence=0.9)
    old_episode = fact.model_copy(update={"layer": Layer.EPISODIC, "type": ItemType.EXCHANGE})
    episode = new_item(ItemType.EXCHANGE, EPISODE, source="t", confidence=0.5, now=NOW, ttl_days=90)
    handed: list[list[MemoryItem]] = []
    loads = []
    for folder, on_layered in (("staged", handed.append), ("at once", None)):
        files = UserFiles(tmp_path / folder, "u")
        # A promotion cut short: the old episodic line is still there, before the new one.
        files.rewrite(files.episode_path(fact.created_at), [old_episode, episode])
        files.rewrite(files.directory / "semantic.jsonl", [fact])
        loads.append(files.load(NOW, on_layered))
    assert handed == [[fact]], "the semantic line wins, and it comes first"
    assert loads[0] == loads[1] == [fact, episode]


# -- a first recall that does not wait for a heavy user's episodes ---------------------------


class Gate:
    """Holds a load in its worker thread until the test lets it go (no sleeps, no timing)."""

    def __init__(self, before_facts=False):
        self.before_facts = before_facts
        self.reached = threading.Event()
        self.release = threading.Event()

    def hold(self):
        self.reached.set()
        assert self.release.wait(10), "the test never released the load"

    def files(self, root, user_id):
        gate = self

        class GatedFiles(UserFiles):
            def load(self, now, on_layered=None, stored_ttl=True):
                if gate.before_facts:
                    gate.hold()

                def then_hold(layered):
                    on_layered(layered)
                    if not gate.before_facts:
                        gate.hold()  # facts and how-tos handed over; episodes not read yet

                held = then_hold if on_layered is not None else None
                return super().load(now, held, stored_ttl)

        return GatedFiles(root, user_id)


async def stored_user(root):
    writer = file_memory(root, MemoryConfig, lambda: NOW)
    kinds = [(ItemType.IDENTITY, NAME, None), (ItemType.HOWTO, HOWTO, None)]
    kinds.append((ItemType.EXCHANGE, EPISODE, 90))
    stored = [  # one turn each: an exchange is not packed beside a fact of its own turn
        new_item(kind, text, source=f"turn:a:{at}", confidence=0.7, now=NOW, ttl_days=ttl)
        for at, (kind, text, ttl) in enumerate(kinds)
    ]
    return await writer.add("u", stored)


def gated_memory(root, gate):
    return file_memory(
        root, MemoryConfig, lambda: NOW, first_recall_wait=0.01, user_files=gate.files
    )


async def loading_held(memory, gate):
    """A load of "u" under way, held after it handed over (or before it read) the facts."""
    load = asyncio.create_task(memory.count_for("u"))
    assert await asyncio.to_thread(gate.reached.wait, 10)
    return load


async def test_the_first_recall_answers_from_facts_while_episodes_still_load(tmp_path, caplog):
    await stored_user(tmp_path)
    gate = Gate()
    memory = gated_memory(tmp_path, gate)
    load = await loading_held(memory, gate)

    with caplog.at_level(logging.INFO, logger="bot.memory.file_repository"):
        first = await memory.recall("u", QUERY)
    assert not gate.release.is_set() and not load.done()
    assert "restart nginx" in first and "Marta" in first and "postgres" not in first
    assert "still loading; recalled from their 2 facts and how-tos" in caplog.text

    gate.release.set()
    assert await load == 3
    later = await memory.recall("u", QUERY)
    assert "postgres backup" in later and "restart nginx" in later


async def test_a_first_recall_before_anything_is_read_answers_empty_and_says_so(tmp_path, caplog):
    await stored_user(tmp_path)
    gate = Gate(before_facts=True)
    memory = gated_memory(tmp_path, gate)
    load = await loading_held(memory, gate)
    with caplog.at_level(logging.INFO, logger="bot.memory.file_repository"):
        assert await memory.recall("u", QUERY) == ""
    assert "still loading; recalled nothing this turn" in caplog.text
    gate.release.set()
    assert await load == 3
    assert "Marta" in await memory.recall("u", QUERY)


async def test_writes_during_a_load_wait_for_it_and_are_kept_once(tmp_path):
    stored = await stored_user(tmp_path)
    episode = next(item for item in stored if item.type is ItemType.EXCHANGE)
    gate = Gate()
    memory = gated_memory(tmp_path, gate)
    load = await loading_held(memory, gate)
    await memory.recall("u", QUERY)  # answered from the facts meanwhile

    fact = new_item(ItemType.PREFERENCE, "The user prefers tea.", source="tool", confidence=0.9)
    added = asyncio.create_task(memory.add("u", [fact]))
    forgotten = asyncio.create_task(memory.forget("u", episode.id))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not added.done() and not forgotten.done(), "writes wait for the load"

    gate.release.set()
    await asyncio.gather(load, added, forgotten)
    expected = [*(item.id for item in stored if item.id != episode.id), fact.id]
    assert sorted(item.id for item in await memory.live_items("u")) == sorted(expected)
    on_disk = UserFiles(tmp_path, "u").load(NOW)
    assert sorted(item.id for item in on_disk) == sorted(expected), "nothing lost, nothing twice"


# -- the collector --------------------------------------------------------------------------


def test_full_collections_wait_while_loads_run_and_come_back_after_the_last():
    before = gc.get_threshold()
    with runtime.full_collections_paused():
        assert gc.get_threshold()[2] > 1_000_000 and gc.get_threshold()[:2] == before[:2]
        with pytest.raises(RuntimeError), runtime.full_collections_paused():
            raise RuntimeError("a load failed")
        assert gc.get_threshold()[2] > 1_000_000, "another load still runs"
    assert gc.get_threshold() == before


def test_only_a_heavy_load_is_frozen_out_of_full_collections():
    before = gc.get_freeze_count()
    runtime.settle(runtime.FREEZE_MIN_ITEMS - 1)
    assert gc.get_freeze_count() == before
    try:
        runtime.settle(runtime.FREEZE_MIN_ITEMS)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
