"""The hub correction: an item like the user's average item says least about any question."""

import numpy as np
import pytest

from bot.adapters.postgres.memory_rows import nearest as nearest_rows
from bot.memory.scoring import HUB_WEIGHT, hub_corrected, nearest_in_meaning
from bot.memory.vectors import VectorIndex


def unit(*values: float) -> np.ndarray:
    row = np.array(values, dtype=np.float32)
    return row / np.linalg.norm(row)


def mean_of(ids: list[str], rows: dict[str, np.ndarray]) -> np.ndarray:
    return np.mean([rows[item_id] for item_id in ids], axis=0)


def test_the_index_keeps_the_mean_of_its_live_rows_as_they_come_and_go():
    rng = np.random.default_rng(7)
    rows = {f"item{n}": unit(*rng.normal(size=8)) for n in range(200)}
    index = VectorIndex.of("m", 8, list(rows)[:100], np.stack(list(rows.values())[:100]))
    live = list(rows)[:100]
    for item_id in list(rows)[100:]:  # grows past the tail block: folded into the main one
        index.put(item_id, rows[item_id])
        live.append(item_id)
    rows["item3"] = unit(*rng.normal(size=8))
    index.put("item3", rows["item3"])  # replaced in place
    for item_id in live[:150]:  # more than half gone: compacted
        index.remove(item_id)
    live = live[150:]

    mean = index.search_as_now().mean

    assert mean is not None
    assert np.allclose(mean, mean_of(live, rows), atol=1e-4)


def test_an_empty_index_has_no_mean_and_the_question_is_left_as_it_is():
    search = VectorIndex("m", 3).search_as_now()
    query = unit(1, 0, 0)

    assert search.mean is None
    assert hub_corrected(query, search.mean) is query


def test_a_line_like_every_other_loses_its_place_to_the_one_about_the_question():
    chatter = [unit(1, 0.05 * n, 0.02) for n in range(8)]  # the user's average item, 8 times
    hub = unit(1, 0.2, 0.1)  # a plain line close to that average
    about = unit(0.5, 0.8, 0.3)  # says something about the question
    query = unit(0.82, 0.49, 0.29)
    ids = [f"chatter{n}" for n in range(8)] + ["hub", "about"]
    index = VectorIndex.of("m", 3, ids, np.stack([*chatter, hub, about]))
    assert float(query @ hub) > float(query @ about)  # by cosine alone the hub comes first

    ranked = list(nearest_in_meaning(index.search_as_now(), query))

    assert ranked.index("about") < ranked.index("hub")


def test_both_stores_rank_with_the_same_correction():
    rng = np.random.default_rng(3)
    ids = [f"item{n}" for n in range(40)]
    vectors = np.stack([unit(*rng.normal(size=6) + 2.0) for _ in ids])  # one shared direction
    query = unit(*rng.normal(size=6) + 2.0)
    index = VectorIndex.of("m", 6, ids, vectors)
    blobs = [
        (item_id, vector.astype("<f4").tobytes())
        for item_id, vector in zip(ids, vectors, strict=True)
    ]

    by_file = index.search_as_now()(hub_corrected(query, index.search_as_now().mean), 10)
    by_postgres = nearest_rows(blobs, query, 10)

    assert list(by_file) == list(by_postgres)
    assert list(by_file.values()) == pytest.approx(list(by_postgres.values()), abs=1e-3)


def test_the_correction_takes_a_share_of_the_mean_off_the_question():
    query, mean = unit(1, 0, 0), np.array([0.5, 0.5, 0.0], dtype=np.float32)

    assert np.allclose(hub_corrected(query, mean), query - HUB_WEIGHT * mean)
