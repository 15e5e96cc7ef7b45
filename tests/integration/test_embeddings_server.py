"""Embeddings from an OpenAI-compatible `/v1/embeddings`: the real `openai` client against a
local server, batched, retried, and failing into words-only recall."""

import numpy as np
import pytest
from aiohttp import web

from bot.adapters.embeddings.remote import RemoteEmbedder
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.ports.embeddings import EmbeddingError
from tests.conftest import edit_runtime_config
from tests.fakes.background_server import BackgroundServer
from tests.fakes.channel import RecordingChannel
from tests.fakes.embeddings import FakeEmbedder
from tests.fakes.openai_server import FakeOpenAiServer


class EmbeddingsServer(BackgroundServer):
    """`/v1/embeddings` answering with the concept fake's vectors; fails the first `failures`
    requests with 503, as a server under load would."""

    name = "fake-embeddings"

    def __init__(self, failures: int = 0, status: int = 503) -> None:
        super().__init__()
        self.failures, self.status = failures, status
        self.batches: list[list[str]] = []
        self._vectors = FakeEmbedder()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/embeddings", self._embeddings)

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self.failures:
            self.failures -= 1
            error = {"error": {"message": "busy", "type": "server_error"}}
            return web.json_response(error, status=self.status)
        self.batches.append(body["input"])
        vectors = await self._vectors.embed(body["input"])
        data = [
            {"object": "embedding", "index": i, "embedding": vector.tolist()}
            for i, vector in enumerate(vectors)
        ]
        return web.json_response({"object": "list", "data": data, "model": body["model"]})

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


async def test_texts_go_in_batches_and_come_back_in_order_as_unit_vectors():
    with EmbeddingsServer() as server:
        embedder = RemoteEmbedder.connect("sk-test", server.base_url, "fake-embed", 5)
        embedder._batch_size = 2
        vectors = await embedder.embed(["sister", "hound", "", "spouse", "beagle"])
        await embedder.close()
    assert [len(batch) for batch in server.batches] == [2, 2, 1]
    assert server.batches[1] == [" ", "spouse"]  # an empty text is sent as a space
    assert vectors.shape[0] == 5
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 3, 4]], axis=1), 1.0)
    assert vectors[1] @ vectors[4] > 0.99  # hound and beagle: one concept in the fake


async def test_a_busy_server_is_retried():
    with EmbeddingsServer(failures=1) as server:
        embedder = RemoteEmbedder.connect("sk-test", server.base_url, "fake-embed", 5)
        vectors = await embedder.embed(["sister"])
        await embedder.close()
    assert vectors.shape[0] == 1 and len(server.batches) == 1


async def test_a_refusing_server_is_an_embedding_error_naming_the_status():
    with EmbeddingsServer(failures=5, status=401) as server:
        embedder = RemoteEmbedder.connect("sk-test", server.base_url, "fake-embed", 5)
        with pytest.raises(EmbeddingError, match="HTTP 401"):
            await embedder.embed(["sister"])
        await embedder.close()


async def test_an_unreachable_server_is_an_embedding_error():
    embedder = RemoteEmbedder.connect("sk-test", "http://127.0.0.1:9/v1", "fake-embed", 1)
    with pytest.raises(EmbeddingError):
        await embedder.embed(["sister"])
    await embedder.close()


async def test_the_app_recalls_a_paraphrase_through_a_remote_embeddings_server(settings):
    with EmbeddingsServer() as embeddings, FakeOpenAiServer() as llm:
        settings.openai_base_url = llm.base_url
        edit_runtime_config(
            settings.runtime_config_path,
            memory={"embeddings": {"provider": "openai", "model": "fake-embed",
                                   "baseUrl": embeddings.base_url}},
        )  # fmt: skip
        app = BotApp.build(settings)
        channel = RecordingChannel()
        address = ChatAddress("test", "alice")

        async def say(text):
            await app.handle(IncomingMessage(address, "alice", text), channel)

        await say("btw my sister Olga lives in Porto")
        await say("/new")
        await say("warming up the vectors")
        await app.memory.drain()
        await say("which town is my sibling based in?")
        await app.aclose()
    prompt = llm.system_prompts()[-1]
    assert "Porto" in prompt.split("# Memory", 1)[1]
    assert any("sister" in text for batch in embeddings.batches for text in batch)
