"""What a loaded user costs in memory, and that the savings change nothing recall sees: the
vectors are kept as 16-bit codes, items read whole share one set of field names, and past
`memory.loadedItems` the users idle longest are let go (read again at their next turn)."""

from collections import Counter
from pathlib import Path
from typing import ClassVar

import numpy as np

from bot.config.model import MemoryConfig
from bot.conversation import utc_now
from bot.memory.file_repository import file_memory
from bot.memory.files import UserFiles
from bot.memory.model import ItemType, MemoryItem, new_item
from bot.memory.vectors import VectorIndex, quantized

DIMENSIONS = 384


def unit_rows(count: int, seed: int = 7) -> np.ndarray:
    """Random unit vectors with a few dominant dimensions, as e5's have."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(count, DIMENSIONS)).astype(np.float32)
    rows[:, :4] *= 6
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_vectors_take_half_the_memory_of_float32():
    rows = unit_rows(1000)
    index = VectorIndex.of("m", DIMENSIONS, [f"id{n}" for n in range(1000)], rows)
    assert index.nbytes <= 0.52 * rows.nbytes


def test_the_nearest_items_and_their_cosines_are_those_of_float32():
    rows = unit_rows(2000)
    ids = [f"id{n}" for n in range(2000)]
    loaded = VectorIndex.of("m", DIMENSIONS, ids, rows)
    put = VectorIndex("m")
    put.put_many(ids, rows)
    for query in unit_rows(20, seed=8):
        exact = rows @ query
        best = np.argsort(-exact)[:10]
        for index in (loaded, put):
            found = index.nearest(query, 10)
            assert list(found) == [ids[at] for at in best]
            assert np.allclose(list(found.values()), exact[best], atol=1e-4)


def test_a_zero_vector_is_kept_and_scores_zero():
    codes, scale = quantized(np.zeros((1, 3), dtype=np.float32))
    assert codes.tolist() == [[0, 0, 0]] and scale.tolist() == [0.0]
    index = VectorIndex("m", 3)
    index.put("zero", np.zeros(3, dtype=np.float32))
    index.put("x", np.array([1, 0, 0], dtype=np.float32))
    assert index.nearest(np.array([1, 0, 0], dtype=np.float32), 2) == {"x": 1.0, "zero": 0.0}


def test_items_read_from_a_file_share_one_set_of_field_names(tmp_path):
    files = UserFiles(tmp_path, "u")
    files.append(
        [new_item(ItemType.FACT, f"fact number {n}", source="t", confidence=0.6) for n in range(3)]
    )
    first, second, third = files.load(utc_now())
    assert first.model_fields_set is second.model_fields_set
    assert first.model_fields_set == set(MemoryItem.model_fields)

    changed = first.model_copy(update={"content": "changed"})
    assert changed.model_fields_set == set(MemoryItem.model_fields)
    assert second.model_fields_set == set(MemoryItem.model_fields)
    assert third.model_dump_json(exclude_unset=True) == third.model_dump_json()


def test_an_item_missing_a_field_keeps_its_own_set():
    line = '{"id": "a1", "layer": "semantic", "type": "fact", "title": "t", "content": "c"}'
    sparse = MemoryItem.model_validate_json(line)
    assert sparse.model_fields_set == {"id", "layer", "type", "title", "content"}
    assert sparse.model_dump(exclude_unset=True)["content"] == "c"
    assert "source" not in sparse.model_dump(exclude_unset=True)


class CountedFiles(UserFiles):
    """`UserFiles` that count how often each user's items are read whole (a load)."""

    loads: ClassVar[Counter[str]] = Counter()

    def load(self, now, on_layered=None, stored_ttl=True):
        CountedFiles.loads[self.directory.name] += 1
        return super().load(now, on_layered, stored_ttl)


def facts_on_disk(root: Path, user: str, count: int) -> None:
    UserFiles(root, user).append(
        [
            new_item(ItemType.FACT, f"{user} fact {n}", source="t", confidence=0.6)
            for n in range(count)
        ]
    )


async def test_past_the_loaded_items_budget_idle_users_are_let_go_and_read_again(tmp_path):
    CountedFiles.loads.clear()
    for user in ("a", "b"):
        facts_on_disk(tmp_path, user, 600)
    memory = file_memory(tmp_path, lambda: MemoryConfig(loadedItems=1000), user_files=CountedFiles)
    assert len(await memory.live_items("a")) == 600
    assert len(await memory.live_items("b")) == 600  # 1,200 > 1,000: a, idle longest, goes
    assert len(await memory.live_items("b")) == 600
    assert CountedFiles.loads == {"u-a": 1, "u-b": 1}
    assert len(await memory.live_items("a")) == 600  # read again, whole
    assert CountedFiles.loads == {"u-a": 2, "u-b": 1}


async def test_within_the_budget_every_user_stays_loaded(tmp_path):
    CountedFiles.loads.clear()
    for user in ("a", "b"):
        facts_on_disk(tmp_path, user, 600)
    memory = file_memory(tmp_path, MemoryConfig, user_files=CountedFiles)
    for user in ("a", "b", "a", "b"):
        assert len(await memory.live_items(user)) == 600
    assert CountedFiles.loads == {"u-a": 1, "u-b": 1}


async def test_a_user_alone_over_the_budget_stays_loaded(tmp_path):
    CountedFiles.loads.clear()
    facts_on_disk(tmp_path, "a", 1200)
    memory = file_memory(tmp_path, lambda: MemoryConfig(loadedItems=1000), user_files=CountedFiles)
    for _ in range(2):
        assert len(await memory.live_items("a")) == 1200
    assert CountedFiles.loads == {"u-a": 1}


def test_a_row_added_after_a_load_takes_a_tail_of_an_eighth_not_a_doubled_matrix():
    rows = unit_rows(10_000)
    index = VectorIndex.of("m", DIMENSIONS, [f"id{n}" for n in range(10_000)], rows)
    assert index.capacity == 10_000
    index.put("new", unit_rows(1, seed=9)[0])
    assert index.capacity == 10_000 + 10_000 // 8
    assert index.nbytes <= 1.13 * 10_000 * (2 * DIMENSIONS + 4 + 1)


def test_a_user_adding_many_items_keeps_at_most_an_eighth_more_rows_than_used():
    index = VectorIndex("m", DIMENSIONS)
    rows = unit_rows(5000)
    for n, row in enumerate(rows):
        index.put(f"id{n}", row)
        assert index.capacity <= max(64, (n + 1) * 9 // 8 + 64)
    assert len(index) == 5000


def test_search_results_are_the_same_before_and_after_growth_and_folding():
    rows = unit_rows(3000)
    ids = [f"id{n}" for n in range(3000)]
    index = VectorIndex.of("m", DIMENSIONS, ids, rows)
    queries = unit_rows(10, seed=8)
    before = [index.nearest(query, 10) for query in queries]
    far = -queries.sum(axis=0)
    far /= np.linalg.norm(far)
    for n in range(3000 // 8 + 1):  # a tail, filled, folded in, and a new tail started
        index.put(f"far{n}", far)
        if n in (0, 3000 // 8 - 1, 3000 // 8):
            assert [index.nearest(query, 10) for query in queries] == before


def test_rows_in_the_tail_are_found_replaced_and_removed():
    rows = unit_rows(200)
    index = VectorIndex.of("m", DIMENSIONS, [f"id{n}" for n in range(100)], rows[:100])
    for n in range(100, 200):  # fills a tail of 64, folds it, starts another
        index.put(f"id{n}", rows[n])
    for n in (5, 150, 199):
        assert next(iter(index.nearest(rows[n], 1))) == f"id{n}"
    index.put("id199", rows[5])  # replaced in the tail
    assert set(index.nearest(rows[5], 2)) == {"id5", "id199"}
    assert index.nearest(rows[199], 1).keys() != {"id199"}
    for n in range(120):
        index.remove(f"id{n}")  # 99 of 200 alive: compacted into one block of 99
    assert len(index) == 80 and index.capacity == 99
    assert next(iter(index.nearest(rows[150], 1))) == "id150"
    assert set(index.nearest(rows[5], 1)) == {"id199"}
