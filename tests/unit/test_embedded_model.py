"""The bundled model's vectors: the bot's own pooling must stay in WordLlama's vector space,
or every vector already stored under its model id would be compared with a different one."""

import numpy as np
import pytest

from bot.adapters.embeddings.embedded import EmbeddedEmbedder, load_wordllama, pooled
from bot.ports.embeddings import unit_rows

TEXTS = [
    "btw my sister Olga lives in Porto",
    "which town is my sibling based in?",
    "у нас живёт кот Барсик, ему уже 12",
    "k8s",
]


@pytest.fixture(scope="module")
def model():
    return load_wordllama()


def test_pooled_vectors_point_where_wordllamas_own_mean_does(model):
    ours = pooled(model, TEXTS)
    theirs = unit_rows(model.embed(TEXTS, norm=False))
    assert np.allclose(ours, theirs, atol=1e-5)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_batch_of_different_lengths_embeds_each_text_as_if_alone(model):
    """Padding to the longest text in a batch must not leak into the shorter ones."""
    together = pooled(model, TEXTS)
    alone = np.vstack([pooled(model, [text]) for text in TEXTS])
    assert np.allclose(together, alone, atol=1e-6)


def test_an_empty_text_is_a_zero_vector_not_nans(model):
    vectors = pooled(model, ["", "hello there"])
    assert not np.isnan(vectors).any()
    assert not vectors[0].any()
    assert vectors[1].any()


async def test_the_adapter_ranks_a_paraphrase_nearest_to_its_fact():
    embedder = EmbeddedEmbedder()
    facts = ["btw my sister Olga lives in Porto", "I bought a used Yamaha piano last month"]
    vectors = await embedder.embed([*facts, "which town is my sibling based in?"])
    assert float(vectors[2] @ vectors[0]) > float(vectors[2] @ vectors[1])
