"""The embedded default: a static embedding model whose weights ship inside its PyPI wheel.

WordLlama's `l2_supercat_256` (256 dimensions, ~16 MB, in the `wordllama` wheel) embeds a
question in some 20 µs on one core with no network and no key, so `make run` has semantic
recall out of the box. Its loader looks for the bundled tokenizer in a cache folder and then
tries to download it; pointing the cache at the package folder itself, with downloads off,
makes it use the files the wheel shipped and never reach the network.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bot.ports.embeddings import EmbeddingError, Vectors, unit_rows

log = logging.getLogger(__name__)

CONFIG = "l2_supercat"
DIMENSIONS = 256
INLINE_TEXTS = 32
"""Up to this many texts are embedded on the event loop (well under a millisecond); more go
to a worker thread so a re-embed of thousands of items never pauses other chats."""


@functools.cache
def load_wordllama() -> Any:
    """The bundled model, read from the installed package once per process; never downloads.
    Blocks ~0.3 s the first time."""
    import wordllama
    from wordllama import WordLlama

    package = Path(wordllama.__file__).parent
    return WordLlama.load(config=CONFIG, dim=DIMENSIONS, cache_dir=package, disable_download=True)


class EmbeddedEmbedder:
    """`EmbeddingPort` over the bundled WordLlama model, loaded once on first use."""

    model_id = f"embedded:{CONFIG}_{DIMENSIONS}"

    def __init__(self) -> None:
        self._model: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now (blocking); later calls return at once. Safe from any thread."""
        with self._lock:
            if self._model is not None or self._failed is not None:
                return
            try:
                self._model = load_wordllama()
            except Exception as exc:  # a broken install must not stop the bot: words still work
                self._failed = f"{type(exc).__name__}: {exc}"
                log.error("[Embeddings] the embedded model could not be loaded: %s", self._failed)

    async def warm_up(self) -> None:
        """Load the model in a worker thread, so the first recall does not pay for it."""
        await asyncio.to_thread(self.load)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self._model is None:
            await self.warm_up()
        if self._model is None:
            raise EmbeddingError(f"the embedded model is unavailable ({self._failed})")
        if len(texts) <= INLINE_TEXTS:
            return self._embed(texts)
        return await asyncio.to_thread(self._embed, texts)

    def _embed(self, texts: Sequence[str]) -> Vectors:
        return pooled(self._model, texts)


def pooled(model: Any, texts: Sequence[str]) -> Vectors:
    """WordLlama's sentence vectors, unit length: the sum of each text's token vectors.

    The same direction as `model.embed` (a mean), computed without its padded 3-D batch:
    a recall embeds its question on the event loop, and this takes ~20 µs instead of ~35.
    Normalised here, not by WordLlama: its own division turns an empty text into NaNs (here
    an empty text is a zero vector).
    """
    table = model.embedding
    encodings = model.tokenizer.encode_batch(list(texts), add_special_tokens=False)
    sums = np.zeros((len(encodings), table.shape[1]), dtype=np.float32)
    for row, encoding in enumerate(encodings):
        ids = np.asarray(encoding.ids)[np.asarray(encoding.attention_mask, dtype=bool)]
        if ids.size:
            sums[row] = table[ids].sum(axis=0)
    return unit_rows(sums)
