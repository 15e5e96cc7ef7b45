"""Text embeddings as memory sees them: sentences in, unit vectors out.

Memory compares a question with what it stored by the cosine of their vectors, so a question
asked in other words than the fact ("my sibling" for "my sister") still finds it. Vectors of
different models live in different spaces: `model_id` names the space, and memory keeps one
set of vectors per model id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""One row per text, L2-normalised, so a dot product is the cosine."""


class EmbeddingError(Exception):
    """No vectors this time (server down, bad model, time-out); memory falls back to words."""


class EmbeddingPort(Protocol):
    @property
    def model_id(self) -> str:
        """Names the vector space (`embedded:multilingual-e5-small-q4`,
        `openai:text-embedding-3-small`); empty while embeddings are off."""
        ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors for `texts`, in order. Raises `EmbeddingError`."""
        ...


def unit_rows(matrix: npt.ArrayLike) -> Vectors:
    """`matrix` as float32 rows of length one; an all-zero row (an empty text) stays zero."""
    rows = np.array(matrix, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Vectors = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return unit


def cosines(rows: Vectors, query: Vectors) -> Vectors:
    """Each row's dot product with `query` (the cosine, both being unit length), on the
    calling thread alone.

    Not `rows @ query`: numpy hands that to OpenBLAS, whose worker threads (one per core)
    spin for a while after every call waiting for more. On a busy two-core machine that
    spinning cost several times the product itself (at 10k rows, 2.1 ms of CPU against
    0.6 ms; in the bot under load, a third of all its CPU). `einsum` without `optimize`
    runs numpy's own vectorised loop and never wakes a BLAS thread."""
    found: Vectors = np.einsum("ij,j->i", rows, query.reshape(-1).astype(rows.dtype, copy=False))
    return found
