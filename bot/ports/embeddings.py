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


COSINE_BLOCK = 1024
"""Rows multiplied by the query at once by `cosines` (1.5 MB of float32 at 384 dimensions)."""


def cosines(rows: npt.NDArray[np.generic], query: Vectors) -> Vectors:
    """Each row's dot product with `query` (the cosine, both being unit length), as float32,
    `COSINE_BLOCK` rows at a time on the calling thread. Rows of another type (the 16-bit
    codes of `bot/memory/vectors.py`) are turned into float32 a block at a time.

    Not `rows @ query` over all rows: numpy hands a product that large to OpenBLAS, whose
    worker threads (one per core) spin for a while after every call waiting for more. At 10k
    rows of 384 on a busy two-core machine that cost 10 ms of CPU per search against 0.6 ms;
    a block of 1024 rows stays on the calling thread (the same CPU as with one OpenBLAS
    thread). For 16-bit codes blocks through BLAS are also cheaper than `einsum` (0.78 ms
    against 0.90 per search at 10k; `einsum` over the codes themselves, 1.1 ms)."""
    count = len(rows)
    found: Vectors = np.empty(count, dtype=np.float32)
    if not count:
        return found
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    as_is = rows.dtype == np.float32 and rows.flags.c_contiguous
    block = None if as_is else np.empty((min(count, COSINE_BLOCK), rows.shape[1]), np.float32)
    for start in range(0, count, COSINE_BLOCK):
        end = min(start + COSINE_BLOCK, count)
        if block is None:
            part = rows[start:end]
        else:
            part = block[: end - start]
            np.copyto(part, rows[start:end], casting="unsafe")
        np.dot(part, vector, out=found[start:end])
    return found
