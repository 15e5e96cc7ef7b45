"""What real OpenAI-compatible servers do that OpenAI does not, one regression test each.

Each behaviour is reproduced by a profile of the fake server (`ServerProfile` in
`tests/fakes/openai_server.py`): `LLAMA_CPP` as llama-cpp-python's server behaved in issue 24,
and on the default `OPENAI` profile what any server may send (an error event mid-stream,
reasoning deltas, an HTML error page, an empty 200). `docs/CONFIGURATION.md` lists them.
"""

import logging

import pytest

from bot.adapters.embeddings.remote import RemoteEmbedder
from bot.adapters.openai_llm import OpenAiLlm
from bot.conversation import ChatMessage, ToolCall
from bot.ports.embeddings import EmbeddingError
from bot.ports.llm import ContextOverflow, EmptyAnswer, LlmError, LlmRequest, ToolSpec
from tests.fakes.llm import ANSWER_SCHEMA, chat_request
from tests.fakes.openai_server import (
    BAG_OF_WORDS_DIM,
    LLAMA_CPP,
    FakeOpenAiServer,
    Reply,
    bag_of_words_embedder,
)

TOOL = ToolSpec("calculator", "math", {"type": "object", "properties": {}})


@pytest.fixture(scope="module")
def llama():
    with FakeOpenAiServer(profile=LLAMA_CPP) as fake:
        yield fake


@pytest.fixture(scope="module")
def openai_like():
    with FakeOpenAiServer() as fake:
        yield fake


async def adapter_for(server: FakeOpenAiServer) -> OpenAiLlm:
    server.requests.clear()
    server._script.clear()
    return OpenAiLlm.connect("sk-test", server.base_url)


@pytest.fixture
async def on_llama(llama):
    adapter = await adapter_for(llama)
    yield adapter
    await adapter.close()


@pytest.fixture
async def on_openai(openai_like):
    adapter = await adapter_for(openai_like)
    yield adapter
    await adapter.close()


def request(*messages: ChatMessage, **overrides) -> LlmRequest:
    return chat_request(*messages, **{"model": "smollm2", "retry_attempts": 1, **overrides})


class Shown:
    """A stream listener keeping every text it was shown."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, text: str) -> None:
        self.texts.append(text)


# -- llama.cpp ------------------------------------------------------------------------------


async def test_llama_a_stream_with_ping_comments_is_read_whole(on_llama, llama):
    shown = Shown()
    llama.script(Reply(text="a streamed answer from llama"))
    response = await on_llama.complete(request(), shown)
    assert response.text == "a streamed answer from llama" and response.finish_reason == "stop"
    assert shown.texts[-1] == "a streamed answer from llama"


async def test_llama_a_stream_without_a_usage_chunk_leaves_usage_to_be_estimated(on_llama, llama):
    llama.script(Reply(text="no usage follows"))
    response = await on_llama.complete(request(), Shown())
    assert llama.requests[-1]["stream_options"] == {"include_usage": True}
    assert response.text == "no usage follows" and response.usage is None


async def test_llama_a_refused_json_schema_500_falls_back_to_json_object(on_llama, llama):
    llama.script(Reply(text='{"word": "hi"}'))
    response = await on_llama.complete(request(response_schema=ANSWER_SCHEMA))
    assert response.text == '{"word": "hi"}'
    formats = [body.get("response_format", {}).get("type") for body in llama.requests]
    assert formats == ["json_schema", "json_object"]


async def test_llama_a_tool_call_message_is_sent_with_empty_content_not_null(on_llama, llama):
    call = ToolCall(id="call_1", name="calculator", arguments="{}")
    history = [
        ChatMessage.user("what is 2+2?"),
        ChatMessage.assistant(None, [call]),
        ChatMessage.tool_result("call_1", "4"),
    ]
    llama.script(Reply(text="It is 4."))
    response = await on_llama.complete(request(*history, tools=[TOOL]))
    assert response.text == "It is 4."
    assert llama.requests[-1]["messages"][2]["content"] == ""


async def test_llama_a_streamed_tool_call_arrives_by_asking_again_without_streaming(
    on_llama, llama, caplog
):
    llama.script(Reply(tool_calls=[("calculator", '{"x": 2}')]))
    response = await on_llama.complete(request(tools=[TOOL]), Shown())
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("calculator", '{"x": 2}')]
    streamed, plain = llama.requests
    assert streamed["stream"] is True and "stream" not in plain
    assert streamed["tool_choice"] == plain["tool_choice"] == "auto"
    assert "asking again without streaming" in caplog.text


async def test_llama_takes_tools_whose_schemas_bound_string_lengths(on_llama, llama):
    """llama.cpp builds a grammar rule per allowed character of a `maxLength` and refuses a
    long one with a bare 500 (found running the bot's reminders tool on the real server);
    the bounds stay with the tool, which checks its own arguments."""
    bounded = ToolSpec(
        "reminders",
        "Set a reminder.",
        {
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 500, "minLength": 1},
                "maxLength": {"type": "integer"},  # a property of that name stays
            },
        },
    )
    llama.script(Reply(text="Done."))
    response = await on_llama.complete(request(tools=[bounded]))
    assert response.text == "Done."
    (sent,) = llama.requests[-1]["tools"]
    properties = sent["function"]["parameters"]["properties"]
    assert properties == {"text": {"type": "string"}, "maxLength": {"type": "integer"}}
    assert bounded.parameters["properties"]["text"]["maxLength"] == 500, "the spec is unchanged"


async def test_llama_ignores_tools_offered_without_tool_choice(llama):
    """The profile itself: what the adapter's `tool_choice: auto` is for."""
    import httpx

    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "2+2?"}],
        "tools": [TOOL.api_dict],
    }
    llama.script(Reply(tool_calls=[("calculator", "{}")]))
    async with httpx.AsyncClient() as client:
        answer = (await client.post(f"{llama.base_url}/chat/completions", json=body)).json()
    assert "tool_calls" not in answer["choices"][0]["message"]


async def test_llama_two_user_messages_in_a_row_are_sent_as_one(on_llama, llama):
    unanswered, again = ChatMessage.user("are you there?"), ChatMessage.user("hello?")
    response = await on_llama.complete(request(unanswered, again))
    assert response.text == "echo: are you there?\n\nhello?"
    sent = llama.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]


async def test_llama_a_context_overflow_is_named_whether_streamed_or_not(on_llama, llama):
    long = request(ChatMessage.user("word " * 3000))
    with pytest.raises(ContextOverflow):
        await on_llama.complete(long)
    llama.requests.clear()
    with pytest.raises(ContextOverflow) as err:
        await on_llama.complete(long, Shown())
    assert [body.get("stream", False) for body in llama.requests] == [True, False]
    assert "/new" in err.value.user_message


# -- any server -----------------------------------------------------------------------------


async def test_an_error_event_mid_stream_is_a_failure_named_in_one_log_line(
    on_openai, openai_like, caplog
):
    openai_like.script(Reply(text="half", stream_failure="error", error_message="KV cache full"))
    with pytest.raises(LlmError) as err:
        await on_openai.complete(request(), Shown())
    assert "KV cache full" in str(err.value)
    lines = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 1 and "KV cache full" in lines[0].getMessage()


async def test_reasoning_deltas_are_never_shown_and_their_tokens_are_read(on_openai, openai_like):
    shown = Shown()
    thoughts = "The user greets me; I should greet back politely."
    openai_like.script(Reply(text="Hello!", reasoning=thoughts, cached_tokens=7))
    response = await on_openai.complete(request(), shown)
    assert response.text == "Hello!" and shown.texts == ["Hello!"]
    assert response.usage is not None
    assert response.usage.reasoning_tokens > 0 and response.usage.cached_tokens == 7


async def test_an_html_error_page_is_named_in_a_short_log_line(on_openai, openai_like, caplog):
    openai_like.script(*[Reply(status=502, html_error=True)] * 2)
    with pytest.raises(LlmError) as err:
        await on_openai.complete(request(retry_attempts=2, retry_max_seconds=5))
    assert "HTTP 502" in err.value.user_message and "<html>" not in err.value.user_message
    failure = next(r.getMessage() for r in caplog.records if "request failed" in r.getMessage())
    assert "502 Bad Gateway" in failure and "\n" not in failure and len(failure) < 400


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_empty_200_is_a_failure_not_an_empty_answer(
    on_openai, openai_like, streamed, caplog
):
    openai_like.script(*[Reply(empty=True)] * 2)
    with pytest.raises(EmptyAnswer):
        await on_openai.complete(request(), Shown() if streamed else None)
    assert len(openai_like.requests) == (2 if streamed else 1)
    assert "sent no usable answer" in caplog.text


async def test_an_answer_cut_by_the_token_limit_says_so(on_openai, openai_like):
    openai_like.script(Reply(text="The first half of", finish_reason="length"))
    response = await on_openai.complete(request(), Shown())
    assert response.text == "The first half of" and response.cut_by_token_limit


async def test_llama_one_embedding_vector_per_token_is_pooled_into_one_per_text(llama, caplog):
    embedder = RemoteEmbedder.connect("sk-test", llama.base_url, "smollm2", 5)
    try:
        vectors = await embedder.embed(["my sister lives in Porto", "my sister", "rain today"])
        again = await embedder.embed(["my sister lives in Porto"])
    finally:
        await embedder.close()
    assert vectors.shape == (3, BAG_OF_WORDS_DIM) and again.shape == (1, BAG_OF_WORDS_DIM)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    pooling = [r for r in caplog.records if "pooled" in r.getMessage()]
    assert len(pooling) == 1, "said once"


async def test_embeddings_of_a_shape_that_cannot_be_pooled_are_refused_clearly(llama):
    embedder = RemoteEmbedder.connect("sk-test", llama.base_url, "smollm2", 5)
    llama.embedder = lambda texts, dim: [[[[0.1]]] for _ in texts]
    try:
        with pytest.raises(EmbeddingError, match="shape"):
            await embedder.embed(["hello"])
    finally:
        llama.embedder = bag_of_words_embedder
        await embedder.close()
