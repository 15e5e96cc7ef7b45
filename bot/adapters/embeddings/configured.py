"""The embedder the runtime config names right now (`memory.embeddings`), switched on edit."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.adapters.embeddings.embedded import EmbeddedEmbedder
from bot.adapters.embeddings.remote import RemoteEmbedder
from bot.config.model import EmbeddingsConfig
from bot.ports.embeddings import EmbeddingError, Vectors


class ConfiguredEmbedder:
    """`EmbeddingPort` that follows `memory.embeddings`: `model_id` changes with the config,
    which is how memory notices a new model and re-embeds in the background."""

    def __init__(
        self,
        config: Callable[[], EmbeddingsConfig],
        api_key: str | None,
        default_base_url: str | None,
    ) -> None:
        self._config = config
        self._api_key = api_key
        self._default_base_url = default_base_url
        self.embedded = EmbeddedEmbedder()
        self._remote: dict[tuple[str, str | None, float], RemoteEmbedder] = {}

    @property
    def model_id(self) -> str:
        config = self._config()
        if config.provider == "off":
            return ""
        if config.provider == "embedded":
            return self.embedded.model_id
        return f"openai:{config.model}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        config = self._config()
        if config.provider == "off":
            raise EmbeddingError("embeddings are off (memory.embeddings.provider)")
        if config.provider == "embedded":
            return await self.embedded.embed(texts)
        return await self._remote_for(config).embed(texts)

    async def warm_up(self) -> None:
        """Load the bundled model before the first message when it is the one in use."""
        if self._config().provider == "embedded":
            await self.embedded.warm_up()

    async def close(self) -> None:
        self.embedded.close()
        for embedder in self._remote.values():
            await embedder.close()
        self._remote.clear()

    def _remote_for(self, config: EmbeddingsConfig) -> RemoteEmbedder:
        base_url = config.base_url or self._default_base_url
        key = (config.model, base_url, config.timeout_seconds)
        if key not in self._remote:
            self._remote[key] = RemoteEmbedder.connect(
                self._api_key, base_url, config.model, config.timeout_seconds
            )
        return self._remote[key]
