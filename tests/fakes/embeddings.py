"""An in-memory EmbeddingPort for unit tests: words of one concept share a direction.

`CONCEPTS` groups words that mean the same thing to the fake ("sister" and "sibling"), so a
test can ask in other words than the fact and know what a real model would answer. It can be
told to fail, and counts what it embedded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bot.ports.embeddings import EmbeddingError, Vectors, unit_rows
from bot.words import WORD

CONCEPTS = [
    {"sister", "sibling", "brother"},
    {"live", "lives", "based", "home", "town", "city"},
    {"dog", "beagle", "hound", "puppy", "pup"},
    {"wife", "husband", "spouse", "partner"},
    {"job", "work", "works", "occupation", "pediatrician", "living"},
    {"allergic", "allergy", "intolerant"},
]
DIMENSIONS = 32


def _direction(word: str) -> int:
    for at, concept in enumerate(CONCEPTS):
        if word in concept:
            return at
    return len(CONCEPTS) + sum(word.encode()) % (DIMENSIONS - len(CONCEPTS))


class FakeEmbedder:
    def __init__(self, model_id: str = "fake:concepts") -> None:
        self.model_id = model_id
        self.failing: Exception | None = None
        self.embedded: list[str] = []
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.failing is not None:
            raise self.failing
        self.embedded += texts
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                rows[row, _direction(word)] += 1.0
        return unit_rows(rows)


def embeddings_down() -> EmbeddingError:
    return EmbeddingError("fake: HTTP 503")
