"""Embeddings from the provider's OpenAI-compatible `/v1/embeddings` (OpenAI, OpenRouter,
Ollama, vLLM, llama.cpp, LM Studio).

Batched, retried with the LLM adapter's policy, bounded by a time-out; any failure is an
`EmbeddingError`, which memory answers by recalling by words alone and embedding the items
later.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient

from bot.adapters.openai_llm import brief_failure, openai_retrying
from bot.ports.embeddings import EmbeddingError, Vectors, unit_rows

log = logging.getLogger(__name__)


class RemoteEmbedder:
    """`EmbeddingPort` over `AsyncOpenAI.embeddings`, `batch_size` texts per request."""

    def __init__(
        self,
        client: AsyncOpenAI,
        model: str,
        *,
        batch_size: int = 64,
        timeout_seconds: float = 10,
        attempts: int = 3,
    ) -> None:
        self._client = client
        self.model = model
        self.model_id = f"openai:{model}"
        self._batch_size = batch_size
        self._timeout = timeout_seconds
        self._attempts = attempts
        self._pooling_said = False

    @classmethod
    def connect(
        cls, api_key: str | None, base_url: str | None, model: str, timeout_seconds: float
    ) -> RemoteEmbedder:
        client = AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=0,
            http_client=DefaultAioHttpClient(),
        )
        return cls(client, model, timeout_seconds=timeout_seconds)

    async def close(self) -> None:
        await self._client.close()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        batches = [
            list(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        try:
            rows = [row for batch in batches for row in await self._embed_batch(batch)]
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"{self.model_id}: {brief_failure(exc)}") from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise EmbeddingError(f"{self.model_id}: unreadable answer ({exc})") from exc
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return unit_rows(rows)

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # Empty strings are refused by some servers; a space embeds as "nothing said".
        inputs = [text if text.strip() else " " for text in batch]
        async for attempt in openai_retrying(self._attempts, self._timeout * self._attempts):
            with attempt:
                answer = await self._client.embeddings.create(
                    model=self.model, input=inputs, timeout=self._timeout
                )
        data = sorted(answer.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise ValueError(f"{len(data)} vectors for {len(batch)} texts")
        return [self._one_vector(item.embedding) for item in data]

    def _one_vector(self, embedding: object) -> list[float]:
        """One text's vector. Some servers (llama.cpp's, with a model not made for
        embeddings) send one vector per token: those are pooled by their mean, said once in
        the log. Any other shape is refused with an `EmbeddingError` naming it."""
        try:
            array = np.asarray(embedding, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            message = f"{self.model_id}: the server sent vectors of uneven shape"
            raise EmbeddingError(message) from exc
        if array.ndim == 2 and array.shape[0] > 0:
            if not self._pooling_said:
                self._pooling_said = True
                log.warning(
                    "[Memory] %s sends one vector per token; they are pooled (mean) into "
                    "one per text",
                    self.model_id,
                )
            array = array.mean(axis=0)
        if array.ndim != 1 or array.size == 0:
            raise EmbeddingError(
                f"{self.model_id}: the server sent a vector of shape {array.shape}, "
                "not one vector per text"
            )
        vector: list[float] = array.tolist()
        return vector
