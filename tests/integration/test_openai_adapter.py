"""The OpenAI adapter with the real `openai` client against a local OpenAI-compatible server."""

import socket
import time

import pytest

from bot.adapters.openai_answers import MAX_ANSWER_BYTES
from bot.adapters.openai_llm import OpenAiLlm
from bot.conversation import ChatMessage
from bot.ports.health import HealthState
from bot.ports.llm import ImageInput, LlmError, TokenUsage, ToolSpec
from tests.fakes.files import png_image
from tests.fakes.llm import ANSWER_SCHEMA, chat_request
from tests.fakes.openai_server import FakeOpenAiServer, Reply, images_in

TOOL = ToolSpec("calculator", "math", {"type": "object", "properties": {}})


@pytest.fixture(scope="module")
def server():
    with FakeOpenAiServer() as fake:
        yield fake


@pytest.fixture
async def llm(server):
    server.requests.clear()
    server._script.clear()
    adapter = OpenAiLlm.connect("sk-test", server.base_url)
    yield adapter
    await adapter.close()


def request(**overrides):
    return chat_request(**overrides)


async def test_plain_answer(llm, server):
    response = await llm.complete(request())
    assert response.text == "echo: hello"
    body = server.requests[0]
    assert body["model"] == "fake-model" and body["max_tokens"] == 100
    assert body["messages"][0] == {"role": "system", "content": "sys"}


async def test_tool_calls_and_results_round_trip_in_the_wire_format(llm, server):
    server.script(Reply(tool_calls=[("calculator", '{"expression": "2+2"}')]))
    response = await llm.complete(request(tools=[TOOL]))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("calculator", '{"expression": "2+2"}')
    ]
    call = response.tool_calls[0]
    follow_up = request(
        messages=[
            ChatMessage.user("2+2?"),
            ChatMessage.assistant(None, [call]),
            ChatMessage.tool_result(call.id, "4"),
        ]
    )
    await llm.complete(follow_up)
    sent = server.requests[-1]["messages"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "calculator"
    assert sent[2] == {"role": "tool", "content": "4", "tool_call_id": call.id}
    assert server.requests[0]["tools"][0]["function"]["name"] == "calculator"


async def test_streaming_reports_growing_text_and_assembles_tool_calls(llm, server):
    seen = []

    async def listener(text):
        seen.append(text)

    server.script(Reply(text="a fairly long streamed answer"))
    response = await llm.complete(request(), listener)
    assert response.text == "a fairly long streamed answer"
    assert len(seen) > 2 and seen[-1] == response.text
    assert all(seen[i + 1].startswith(seen[i]) for i in range(len(seen) - 1))

    server.script(Reply(tool_calls=[("a", '{"x": 1}'), ("b", '{"y": "two"}')]))
    response = await llm.complete(request(tools=[TOOL]), listener)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("a", '{"x": 1}'),
        ("b", '{"y": "two"}'),
    ]
    assert response.tool_calls[0].id != response.tool_calls[1].id


async def test_429_is_retried_after_exactly_the_retry_after_delay(llm, server):
    server.script(Reply(status=429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    response = await llm.complete(request())
    elapsed = time.monotonic() - started
    assert response.text == "echo: hello"
    assert len(server.requests) == 2
    assert 1.0 <= elapsed < 2.5


async def test_server_errors_and_dropped_connections_are_retried(llm, server):
    server.script(Reply(status=500), Reply(drop_connection=True), Reply(status=502))
    response = await llm.complete(request(retry_attempts=5))
    assert response.text == "echo: hello"
    assert len(server.requests) == 4


async def test_persistent_503_gives_a_clear_error_after_the_attempts(llm, server):
    server.script(*[Reply(status=503)] * 3)
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_attempts=3))
    assert len(server.requests) == 3
    assert "HTTP 503" in err.value.user_message and "after 3 attempts" in err.value.user_message


async def test_auth_errors_are_not_retried_and_name_the_setting(llm, server):
    server.script(Reply(status=401))
    with pytest.raises(LlmError) as err:
        await llm.complete(request())
    assert len(server.requests) == 1
    assert "OPENAI_API_KEY" in err.value.user_message
    assert "sk-test" not in err.value.user_message


async def test_unknown_model_names_the_setting(llm, server):
    server.script(Reply(status=404))
    with pytest.raises(LlmError) as err:
        await llm.complete(request(model="nope"))
    assert "'nope' was not found" in err.value.user_message


async def test_timeouts_are_retried_then_reported(llm, server):
    server.script(Reply(delay=1.0), Reply(delay=1.0))
    started = time.monotonic()
    with pytest.raises(LlmError) as err:
        await llm.complete(request(timeout_seconds=0.2, retry_attempts=2))
    assert time.monotonic() - started < 3
    assert "did not answer within 0.2 seconds" in err.value.user_message


async def test_total_retry_time_is_bounded_even_if_retry_after_asks_for_more(llm, server):
    server.script(Reply(status=429, headers={"Retry-After": "30"}))
    started = time.monotonic()
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_max_seconds=2))
    assert time.monotonic() - started < 2
    assert "HTTP 429" in err.value.user_message


async def test_unreachable_server_is_reported_plainly():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = OpenAiLlm.connect("k", f"http://127.0.0.1:{port}/v1")
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_attempts=2))
    await llm.close()
    assert "can't reach the language model server" in err.value.user_message


async def test_switches_to_max_completion_tokens_when_the_api_asks(llm, server):
    message = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
    server.script(Reply(status=400, error_message=message))
    response = await llm.complete(request())
    assert response.text == "echo: hello"
    assert "max_tokens" in server.requests[0]
    assert server.requests[1]["max_completion_tokens"] == 100
    assert "max_tokens" not in server.requests[1]


SCHEMA = ANSWER_SCHEMA


async def test_a_response_schema_is_sent_as_json_schema_and_never_streamed(llm, server):
    seen = []

    async def listener(text):
        seen.append(text)

    server.script(Reply(text='{"word": "hi"}'))
    response = await llm.complete(request(response_schema=SCHEMA), listener)
    assert response.text == '{"word": "hi"}'
    body = server.requests[0]
    assert "stream" not in body and seen == []
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }


async def test_a_refused_json_schema_falls_back_to_json_object_once_per_model(llm, server):
    message = "Invalid parameter: 'response_format' of type 'json_schema' is not supported."
    server.script(Reply(status=400, error_message=message), Reply(text='{"word": "a"}'))
    assert (await llm.complete(request(response_schema=SCHEMA))).text == '{"word": "a"}'
    formats = [body["response_format"]["type"] for body in server.requests]
    assert formats == ["json_schema", "json_object"]

    server.script(Reply(text='{"word": "b"}'))
    await llm.complete(request(response_schema=SCHEMA))
    assert server.requests[-1]["response_format"] == {"type": "json_object"}
    await llm.complete(request(response_schema=SCHEMA, model="other"))
    assert server.requests[-1]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("status", [400, 422, 500])
async def test_a_server_refusing_both_formats_is_asked_for_plain_json_once_per_model(
    llm, server, status
):
    message = "body -> response_format -> type: Input should be 'text'"
    refusal = Reply(status=status, error_message=message)
    server.script(refusal, refusal, Reply(text='{"word": "plain"}'))
    response = await llm.complete(request(response_schema=SCHEMA, retry_attempts=1))
    assert response.text == '{"word": "plain"}'
    formats = [body.get("response_format", {}).get("type") for body in server.requests]
    assert formats == ["json_schema", "json_object", None]
    await llm.complete(request(response_schema=SCHEMA))
    assert "response_format" not in server.requests[-1], "remembered: asked once"


async def test_a_server_refusing_even_plain_json_is_not_asked_a_fourth_time(llm, server):
    message = "response_format is not supported"
    server.script(*[Reply(status=400, error_message=message)] * 4)
    with pytest.raises(LlmError) as err:
        await llm.complete(request(response_schema=SCHEMA))
    assert len(server.requests) == 3 and "HTTP 400" in err.value.user_message


async def test_other_400s_of_a_schema_request_are_not_retried(llm, server):
    server.script(Reply(status=400, error_message="context length exceeded"))
    with pytest.raises(LlmError):
        await llm.complete(request(response_schema=SCHEMA))
    assert len(server.requests) == 1


async def test_a_schema_request_is_retried_like_any_other(llm, server):
    server.script(Reply(status=503), Reply(text='{"word": "c"}'))
    response = await llm.complete(request(response_schema=SCHEMA))
    assert response.text == '{"word": "c"}' and len(server.requests) == 2


async def test_a_huge_streamed_answer_is_cut_at_the_limit(llm, server, caplog):
    seen = []

    async def listener(text):
        seen.append(len(text))

    server.script(Reply(text="x" * 300_000))
    response = await llm.complete(request(max_output_chars=20_000), listener)
    assert response.truncated
    assert response.text == "x" * 20_000
    assert max(seen) <= 20_000, "nothing past the limit reached the channel"
    assert "[LLM] answer cut at 20000 characters (llm.maxOutputChars)" in caplog.text


async def test_a_huge_plain_answer_is_cut_at_the_limit(llm, server):
    server.script(Reply(text="y" * 50_000))
    response = await llm.complete(request(max_output_chars=1_000))
    assert response.truncated and response.text == "y" * 1_000


async def test_following_a_long_stream_costs_time_linear_in_its_length(llm, server):
    joined = []

    async def listener(text):
        joined.append(len(text))

    server.script(Reply(text="z" * 200_000))  # 25,000 deltas of 8 characters
    response = await llm.complete(request(), listener)
    assert len(response.text) == 200_000 and not response.truncated
    assert joined[-1] == 200_000
    # Joined on every delta, the listener's texts would add up to 2.5 billion characters.
    assert sum(joined) < 10 * 200_000 + 4096 * 4096 // 8


async def test_images_go_with_the_last_user_message_as_data_urls(llm, server):
    jpeg = png_to_jpeg(png_image(64, 48))
    history = [
        ChatMessage(role="system", content="sys"),
        ChatMessage.user("earlier question"),
        ChatMessage.assistant("earlier answer"),
        ChatMessage.user("[Photo] what is this?"),
    ]
    response = await llm.complete(
        request(messages=history, images=(ImageInput(jpeg, "image/jpeg"),))
    )
    assert response.text == "echo: [Photo] what is this?"
    body = server.requests[-1]
    assert images_in(body) == [("user", jpeg)]
    assert body["messages"][1] == {"role": "user", "content": "earlier question"}
    assert body["messages"][3]["content"][0] == {"type": "text", "text": "[Photo] what is this?"}

    await llm.complete(request(messages=[*history, ChatMessage.assistant("a cat")]))
    assert images_in(server.requests[-1]) == []


async def test_the_fake_refuses_an_image_that_is_not_what_it_says_as_a_real_api_would(llm, server):
    server.script(Reply(text="kept for the next request"))
    with pytest.raises(LlmError, match="HTTP 400"):
        await llm.complete(request(images=(ImageInput(b"not a jpeg", "image/jpeg"),)))
    assert (await llm.complete(request())).text == "kept for the next request"


def png_to_jpeg(png: bytes) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    with Image.open(io.BytesIO(png)) as image:
        image.convert("RGB").save(out, format="JPEG")
    return out.getvalue()


async def test_usage_is_read_from_answers_and_from_the_last_streamed_chunk(llm, server):
    server.script(Reply(text="plain", usage=(120, 7)), Reply(text="streamed", usage=(300, 9)))
    assert (await llm.complete(request())).usage == TokenUsage(120, 7)
    seen: list[str] = []

    async def listen(text: str) -> None:
        seen.append(text)

    response = await llm.complete(request(), listen)
    assert server.requests[-1]["stream_options"] == {"include_usage": True}
    assert response.usage == TokenUsage(300, 9) and response.text == "streamed"


async def test_a_server_refusing_stream_options_is_asked_again_without(llm, server, caplog):
    refusal = "Unrecognized request argument supplied: stream_options"
    server.script(Reply(status=400, error_message=refusal), Reply(text="fine"))

    async def listen(text: str) -> None:
        pass

    response = await llm.complete(request(), listen)
    assert response.text == "fine" and response.usage is None
    assert "stream_options" not in server.requests[-1]
    await llm.complete(request(), listen)
    assert "stream_options" not in server.requests[-1], "learnt once"


async def test_requests_carry_the_key_and_the_sdks_own_headers_streamed_or_not(llm, server):
    async def listen(text: str) -> None:
        pass

    await llm.complete(request())
    await llm.complete(request(), listen)
    plain, streamed = server.chat_headers[-2:]
    for headers in (plain, streamed):
        assert headers["Authorization"] == "Bearer sk-test"
        assert headers["Content-Type"] == "application/json"
        assert headers["User-Agent"].startswith("AsyncOpenAI/Python")
        assert headers["Accept"] == "application/json"  # what the SDK sends, streaming too
        assert headers["x-stainless-read-timeout"] == "5"


async def test_an_error_event_in_a_stream_is_a_clear_error_not_an_answer(llm, server):
    seen: list[str] = []

    async def listen(text: str) -> None:
        seen.append(text)

    server.script(Reply(text="half an answer", stream_failure="error", error_message="overloaded"))
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_attempts=1), listen)
    assert "overloaded" in str(err.value)
    assert len(server.requests) == 1


async def test_a_streamed_event_that_never_ends_is_refused_not_held(llm, server):
    async def listen(text: str) -> None:
        pass

    server.script(Reply(text="start", stream_failure="endless"))
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_attempts=3), listen)
    assert "larger than 16 MB" in str(err.value)
    assert len(server.requests) == 1, "a server sending too much is not asked again"


async def test_an_answer_past_the_size_bound_is_refused(llm, server):
    server.script(Reply(text="x" * (MAX_ANSWER_BYTES + 1)))
    with pytest.raises(LlmError) as err:
        await llm.complete(request(retry_attempts=3))
    assert "larger than 16 MB" in str(err.value)
    assert len(server.requests) == 1


async def test_a_stream_the_server_hangs_up_midway_is_asked_again(llm, server):
    seen: list[str] = []

    async def listen(text: str) -> None:
        seen.append(text)

    server.script(Reply(text="first try cut short", stream_failure="drop"))
    response = await llm.complete(request(retry_attempts=2), listen)
    assert response.text == "echo: hello"
    assert len(server.requests) == 2
    assert seen[-1] == "echo: hello", "the listener ends with the answer given"


async def test_health_is_ok_while_the_server_answers_and_down_when_it_is_gone():
    with FakeOpenAiServer() as alive:
        adapter = OpenAiLlm.connect("sk-test", alive.base_url)
        try:
            assert (await adapter.health()).state is HealthState.OK
            alive.stop()
            gone = await adapter.health()
            assert gone.state is HealthState.DOWN
            assert gone.detail in ("the server cannot be reached", "no answer within 2.5s")
            assert "sk-test" not in gone.detail
        finally:
            await adapter.close()


async def test_the_environments_proxy_carries_the_requests_as_with_the_sdks_client(
    server, monkeypatch
):
    proxy = server.base_url.removesuffix("/v1")  # the fake serves a proxy's absolute URLs too
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    llm = OpenAiLlm.connect("sk-test", "http://llm.example/v1")
    try:
        server.script(Reply(text="through the proxy"))
        assert (await llm.complete(request())).text == "through the proxy"
        assert server.chat_headers[-1]["Host"] == "llm.example"
    finally:
        await llm.close()
