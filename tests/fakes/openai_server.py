"""A small OpenAI-compatible server on 127.0.0.1, scripted by tests: chat completions,
embeddings, and speech both ways (`/v1/audio/transcriptions`, `/v1/audio/speech`).

It speaks the real wire format (JSON and SSE streaming, tool calls, multipart uploads, error
bodies, Retry-After) so the real `openai` client talks to it unchanged. It runs its own event
loop on a daemon thread, so a bot started as a subprocess, a benchmark and async tests can all
use it.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from tests.fakes.audio import tone_wav
from tests.fakes.background_server import BackgroundServer
from tests.fakes.llm import echo


@dataclass
class Reply:
    """What the fake answers to one request."""

    text: str | None = None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    """(function name, raw JSON arguments) pairs."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: threading.Event | None = None
    """The answer waits until the test sets this: a call that is under way for as long as the
    test needs, however slow the machine (a `delay` is a guess at that)."""
    chunk_delay: float = 0.0
    """Streaming: pause between text chunks, so a client sees the answer arrive over time."""
    pause: threading.Event | None = None
    """Streaming: after the first piece of text the rest waits until the test sets this, so
    a test can see the first words shown before the last are written."""
    drop_connection: bool = False
    error_message: str = "fake error"
    stream_failure: str | None = None
    """Streaming: after the first chunk, `"error"` sends an error event (as OpenAI does when
    generation fails midway), `"drop"` hangs up, and `"endless"` starts an event that never
    ends (up to 64 MB), to see the client give up on it."""
    usage: tuple[int, int] | None = None
    """(prompt, completion) tokens to report; None: about four characters a token."""
    cached_tokens: int = 0
    """Reported as `usage.prompt_tokens_details.cached_tokens` when not 0."""
    reasoning: str | None = None
    """A reasoning model's thoughts, sent before the answer as `reasoning` deltas (streamed)
    or `reasoning_content` (not streamed), and counted as reasoning tokens."""
    finish_reason: str | None = None
    """What the answer's last chunk says; None: `tool_calls` or `stop` as the reply has."""
    empty: bool = False
    """HTTP 200 and nothing else: a stream of no chunk, or a completion of no choice (what
    llama.cpp's server sends when it overflows its context inside a stream)."""
    html_error: bool = False
    """An error `status` comes as an HTML page (a proxy's or load balancer's), not JSON."""


@dataclass
class Transcript:
    """What the fake answers to one transcription request (a failure when `status` != 200)."""

    text: str = ""
    status: int = 200
    delay: float = 0.0
    error_message: str = "fake transcription error"


@dataclass(frozen=True)
class Upload:
    """One transcription request as it arrived: the form fields and the audio file."""

    fields: dict[str, str]
    filename: str
    content_type: str
    audio: bytes


@dataclass(frozen=True)
class ServerProfile:
    """How a family of OpenAI-compatible servers behaves where it differs from OpenAI's API,
    so each difference is reproduced by the fake and pinned by a regression test
    (`tests/integration/test_llm_server_profiles.py`). A difference found on a real server
    becomes a field here first; the run against the real server itself (a scripted
    conversation through the whole bot, `make test-real-llm`, not built yet) then checks
    that the profile still says what the server does."""

    name: str
    usage_chunk: bool = True
    """Streams usage in a last chunk when `stream_options.include_usage` asks."""
    ping_comments: bool = False
    """Sends SSE comments (`: ping`) before and between chunks."""
    schema_refusal: int | None = None
    """Status with which a `json_schema` response format is refused (None: it is taken)."""
    null_content_refusal: int | None = None
    """Status with which a message whose `content` is null is refused."""
    streamed_tool_call_empty: bool = False
    """A streamed answer that would be a tool call is an empty 200 instead."""
    tools_need_tool_choice: bool = False
    """Tools offered without `tool_choice` are ignored: the model answers in text."""
    alternating_roles: bool = False
    """Two user (or assistant) messages in a row are refused, as Mistral's and Gemma's chat
    templates do (HTTP 500, "roles must alternate")."""
    context_chars: int | None = None
    """The context window, in characters of the messages: past it a request is refused with
    400 `context_length_exceeded`, or, streamed, answered with an empty 200."""
    embedding_per_token: bool = False
    """`/v1/embeddings` gives one vector per word of each input, not one per input."""
    grammar_max_length: int | None = None
    """Tools whose schemas bound a string's length past this are refused with a bare 500:
    llama.cpp makes one grammar rule per allowed character and gives up ("failed to parse
    grammar"), saying only "Server got itself in trouble"."""


OPENAI = ServerProfile("openai")
LLAMA_CPP = ServerProfile(
    "llama.cpp",
    usage_chunk=False,
    ping_comments=True,
    schema_refusal=500,
    null_content_refusal=500,
    streamed_tool_call_empty=True,
    tools_need_tool_choice=True,
    alternating_roles=True,
    context_chars=8192,
    embedding_per_token=True,
    grammar_max_length=32,
)
"""llama-cpp-python 0.3's server as tried in issue 24 (SmolLM2-135M, a 2,048-token context),
with a chat template that needs alternating roles."""


Responder = Callable[[dict[str, Any]], Reply]
Embedder = Callable[[list[str], int | None], list[list[float]]]
"""Texts and the `dimensions` a request asked for (None when it asked for none) in, one unit
vector per text out: what `/v1/embeddings` serves."""


class EchoResponder:
    """The default LLM: answers `echo: <last user message>` (so a test can see which message
    was answered), after `latency()` seconds, streamed `chunk_delay` seconds apart."""

    def __init__(self) -> None:
        self.latency: Callable[[], float] = lambda: 0.0
        self.chunk_delay = 0.0
        """Seconds between streamed pieces of an answer."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        question = text_of(users[-1]["content"]) if users else ""
        return Reply(text=echo(question), delay=self.latency(), chunk_delay=self.chunk_delay)


def text_of(content: Any) -> str:
    """A message's text, whether plain or in content parts (a message with images)."""
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return str(content or "")


IMAGE_MAGIC = {"image/jpeg": b"\xff\xd8\xff", "image/png": b"\x89PNG\r\n\x1a\n"}


def images_in(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Every image part of a request, as (role of its message, decoded bytes)."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                encoded = part["image_url"]["url"].partition(",")[2]
                found.append((message["role"], base64.b64decode(encoded)))
    return found


def invalid_image_part(body: dict[str, Any]) -> str | None:
    """What a real vision API would refuse in a request's image parts: a part of an unknown
    type, an image anywhere but a user message, a URL that is no base64 data URL, or bytes
    that are not the image type it names. None when every part is well formed."""
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            kind = part.get("type")
            if kind == "text":
                continue
            if kind != "image_url" or message.get("role") != "user":
                return f"unexpected content part {kind!r} in a {message.get('role')} message"
            header, _, encoded = str(part.get("image_url", {}).get("url", "")).partition(",")
            mime = header.removeprefix("data:").removesuffix(";base64")
            if not header.startswith("data:") or not header.endswith(";base64"):
                return "image_url is not a base64 data URL"
            try:
                data = base64.b64decode(encoded, validate=True)
            except ValueError:
                return "image data is not valid base64"
            if mime not in IMAGE_MAGIC or not data.startswith(IMAGE_MAGIC[mime]):
                return f"image data is not a {mime} image"
    return None


class FakeOpenAiServer(BackgroundServer):
    """Start with `with FakeOpenAiServer() as llm:`; point `OPENAI_BASE_URL` at `llm.base_url`.

    Replies come from the script (`llm.script(Reply(...), ...)`) while it lasts, then from
    `responder`. Every request body is kept in `requests`, in arrival order.
    """

    name = "fake-openai"

    def __init__(
        self,
        responder: Responder | None = None,
        port: int = 0,
        embedder: Embedder | None = None,
        profile: ServerProfile = OPENAI,
    ) -> None:
        """`embedder` serves `/v1/embeddings`; the default is the bag-of-words `embed_text`
        (texts sharing words are close), `semantic_embedder()` the bundled e5 model."""
        super().__init__(port)
        self.responder = responder or EchoResponder()
        self.embedder = embedder or bag_of_words_embedder
        self.profile = profile
        """How the fake behaves where servers differ (`OPENAI`, `LLAMA_CPP`)."""
        self.requests: list[dict[str, Any]] = []
        self.chat_headers: list[dict[str, str]] = []
        """The HTTP headers of each chat request, in order."""
        self.embedding_requests: list[dict[str, Any]] = []
        self.uploads: list[Upload] = []
        """Every transcription request, in arrival order."""
        self.speech_requests: list[dict[str, Any]] = []
        """Every speech request's JSON body, in arrival order."""
        self.default_transcript = Transcript("")
        """What transcriptions answer once the scripted ones are used up."""
        self.speech_status = 200
        """Set to an HTTP error status to make `/v1/audio/speech` fail."""
        self._transcripts: deque[Transcript] = deque()
        self.hang_ups = 0
        """Streamed answers the client stopped reading and hung up on before their end."""
        self._script: deque[Reply] = deque()
        self._routes: list[tuple[Callable[[dict[str, Any]], bool], deque[Reply], Reply | None]] = []
        self._lock = threading.Lock()

    # -- scripting -------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def script_for(
        self, match: Callable[[dict[str, Any]], bool], *replies: Reply, then: Reply | None = None
    ) -> None:
        """Requests that `match` (the summariser's, say) are answered by `replies` in turn,
        then by `then` (when given) or as any other request; the main script is not used."""
        with self._lock:
            self._routes.append((match, deque(replies), then))

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            for match, replies, then in self._routes:
                if match(body) and (replies or then is not None):
                    return replies.popleft() if replies else then  # type: ignore[return-value]
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    def script_transcripts(self, *transcripts: Transcript | str) -> None:
        """The next transcriptions' answers, in order (a string is a transcript of that text)."""
        with self._lock:
            self._transcripts.extend(
                t if isinstance(t, Transcript) else Transcript(t) for t in transcripts
            )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def system_prompts(self) -> list[str]:
        return [
            m["content"]
            for body in self.requests
            for m in body.get("messages", [])[:1]
            if m.get("role") == "system"
        ]

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speak)

    # -- handlers --------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.embedding_requests.append(body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = int(body["dimensions"]) if body.get("dimensions") else None
        texts = [str(text) for text in inputs]
        vectors: list[Any] = self.embedder(texts, dim)
        if self.profile.embedding_per_token:
            vectors = [self.embedder(text.split() or [text], dim) for text in texts]
        data = [
            {"object": "embedding", "index": i, "embedding": vector}
            for i, vector in enumerate(vectors)
        ]
        return web.json_response(
            {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": _usage()}
        )

    async def _transcribe(self, request: web.Request) -> web.Response:
        fields: dict[str, str] = {}
        upload: tuple[str, str, bytes] | None = None
        async for part in await request.multipart():
            if isinstance(part, BodyPartReader) and part.filename is not None:
                content_type = part.headers.get("Content-Type", "")
                upload = (part.filename, content_type, bytes(await part.read()))
            elif isinstance(part, BodyPartReader):
                fields[part.name or ""] = await part.text()
        if upload is None or "model" not in fields:
            return _error(400, "file and model are required")
        with self._lock:
            self.uploads.append(Upload(fields, *upload))
            answer = self._transcripts.popleft() if self._transcripts else self.default_transcript
        if answer.delay:
            await asyncio.sleep(answer.delay)
        if answer.status != 200:
            return _error(answer.status, answer.error_message)
        if fields.get("response_format") == "text":
            return web.Response(text=answer.text)
        return web.json_response({"text": answer.text})

    async def _speak(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.speech_requests.append(body)
        if self.speech_status != 200:
            return _error(self.speech_status, "fake speech error")
        if not body.get("input") or not body.get("model") or not body.get("voice"):
            return _error(400, "input, model and voice are required")
        # Real audio whatever `response_format` asked for, as lax local servers do: a tone
        # of about 60 ms per character, so longer answers make longer speech.
        seconds = min(30.0, 0.06 * len(str(body["input"])))
        return web.Response(body=tone_wav(seconds), content_type="audio/wav")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.chat_headers.append(dict(request.headers))
        problem = invalid_image_part(body)
        if problem is not None:  # as OpenAI does: 400, and no scripted reply is used up
            with self._lock:
                self.requests.append(body)
            error = {"error": {"message": f"Invalid image: {problem}", "type": "invalid_request"}}
            return web.json_response(error, status=400)
        refusal = self._refusal(body)
        if refusal is not None:  # the server's own limits: no scripted reply is used up
            with self._lock:
                self.requests.append(body)
            return refusal
        reply = self._as_the_server_would(body, self.next_reply(body))
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hold is not None:
            await asyncio.to_thread(reply.hold.wait)
        if reply.drop_connection:
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if reply.status != 200:
            if reply.html_error:
                return web.Response(
                    text=html_page(reply.status), status=reply.status, content_type="text/html"
                )
            error = {"error": {"message": reply.error_message, "type": "fake", "code": None}}
            return web.json_response(error, status=reply.status, headers=reply.headers)
        model = body.get("model", "fake")
        usage = usage_json(body, reply)
        if body.get("stream"):
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            wants_usage = wants_usage and self.profile.usage_chunk
            return await self._stream(request, reply, model, usage if wants_usage else None)
        if reply.empty:
            return web.json_response({"id": "chatcmpl-fake", "choices": []})
        return web.json_response(completion_json(reply, model, usage), headers=reply.headers)

    def _refusal(self, body: dict[str, Any]) -> web.StreamResponse | None:
        """The profile's refusal of this request, as that server family sends it; None when
        it takes it."""
        profile = self.profile
        messages = body.get("messages", [])
        response_format = (body.get("response_format") or {}).get("type")
        if profile.schema_refusal and response_format == "json_schema":
            message = (
                "1 validation error: body -> response_format -> type: "
                "Input should be 'text' or 'json_object'"
            )
            return _error(profile.schema_refusal, message)
        if profile.null_content_refusal and any(m.get("content") is None for m in messages):
            message = "messages -> content: Input should be a valid string"
            return _error(profile.null_content_refusal, message)
        if profile.grammar_max_length is not None and _longest_bound(body.get("tools")) > (
            profile.grammar_max_length
        ):
            return _error(500, "Server got itself in trouble")
        roles = [m.get("role") for m in messages]
        repeated = any(a == b in ("user", "assistant") for a, b in itertools.pairwise(roles))
        if profile.alternating_roles and repeated:
            message = "Conversation roles must alternate user/assistant/user/assistant/..."
            return _error(500, message)
        size = sum(len(text_of(m.get("content"))) for m in messages)
        if profile.context_chars is not None and size > profile.context_chars:
            if body.get("stream"):
                return web.Response(status=200, content_type="text/event-stream")
            message = (
                f"Requested tokens ({size // 4}) exceed context window of "
                f"{profile.context_chars // 4}"
            )
            error = {"message": message, "type": "invalid_request_error"}
            error["code"] = "context_length_exceeded"
            return web.json_response({"error": error}, status=400)
        return None

    def _as_the_server_would(self, body: dict[str, Any], reply: Reply) -> Reply:
        """The scripted reply as this profile's server would give it."""
        if not reply.tool_calls or not body.get("tools"):
            return reply
        if self.profile.tools_need_tool_choice and "tool_choice" not in body:
            return Reply(text=reply.text or "I have no tools.")
        if self.profile.streamed_tool_call_empty and body.get("stream"):
            with self._lock:  # it picks the same tool when asked again without streaming
                self._script.appendleft(reply)
            return Reply(empty=True)
        return reply

    async def _stream(
        self, request: web.Request, reply: Reply, model: str, usage: dict[str, Any] | None
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if reply.empty:
            await response.write_eof()
            return response
        ping = b": ping\n\n" if self.profile.ping_comments else b""
        chunks = stream_chunks(reply, model)
        if usage is not None:  # as OpenAI sends it: a last chunk with no choices
            chunks.append({**chunks[-1], "choices": [], "usage": usage})
        try:
            for index, chunk in enumerate(chunks):
                await response.write(ping + f"data: {json.dumps(chunk)}\n\n".encode())
                if index == 0 and reply.stream_failure is not None:
                    return await _fail_stream(request, response, reply)
                if index == 1 and reply.pause is not None:
                    await asyncio.to_thread(reply.pause.wait)
                if reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:  # the client hung up (an answer cut, a turn stopped)
            with self._lock:
                self.hang_ups += 1
        return response


async def _fail_stream(
    request: web.Request, response: web.StreamResponse, reply: Reply
) -> web.StreamResponse:
    """A stream failing midway: an error event and the end, or a hang-up."""
    if reply.stream_failure == "error":
        error = {"error": {"message": reply.error_message, "type": "server_error"}}
        await response.write(f"data: {json.dumps(error)}\n\n".encode())
        await response.write_eof()
    elif reply.stream_failure == "endless":
        await response.write(b'data: {"choices": [{"delta": {"content": "')
        for _ in range(1024):  # the client gives up long before (a reset ends the loop)
            await response.write(b"x" * 65536)
        await response.write_eof()
    else:
        assert request.transport is not None
        request.transport.close()
    return response


def usage_json(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The usage the fake reports: the reply's own, else about four characters a token."""
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        asked = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        answered = len(reply.text or "") + sum(len(a) for _, a in reply.tool_calls)
        prompt, completion = asked // 4 + 1, answered // 4 + 1
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    if reply.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": len(reply.reasoning) // 4 + 1}
    return usage


def html_page(status: int) -> str:
    """An error page as a reverse proxy sends it in front of a server that is down."""
    return (
        f"<html>\n<head><title>{status} Bad Gateway</title></head>\n<body>\n"
        f"<center><h1>{status} Bad Gateway</h1></center>\n<hr><center>nginx</center>\n"
        "</body>\n</html>\n"
    )


def completion_json(
    reply: Reply, model: str, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason(reply),
            }
        ],
        "usage": usage or _usage(),
    }


def stream_chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The answer as the API streams it: text in small pieces, tool calls split in two parts."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    for start in range(0, len(reply.reasoning or ""), 8):
        chunks.append(chunk({"reasoning": (reply.reasoning or "")[start : start + 8]}))
    text = reply.text or ""
    for start in range(0, len(text), 8):
        chunks.append(chunk({"content": text[start : start + 8]}))
    for i, (name, arguments) in enumerate(reply.tool_calls):
        half = len(arguments) // 2
        head = {"name": name, "arguments": arguments[:half]}
        first = {"index": i, "id": f"call_{i}", "type": "function", "function": head}
        chunks.append(chunk({"tool_calls": [first]}))
        rest = {"index": i, "function": {"arguments": arguments[half:]}}
        chunks.append(chunk({"tool_calls": [rest]}))
    chunks.append(chunk({}, finish_reason(reply)))
    return chunks


def finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


BAG_OF_WORDS_DIM = 64


def bag_of_words_embedder(texts: list[str], dimensions: int | None) -> list[list[float]]:
    return [embed_text(text, dimensions or BAG_OF_WORDS_DIM) for text in texts]


def semantic_embedder() -> Embedder:
    """The bot's bundled e5 model (384 dimensions), loaded now (~0.2 s), so that a question
    finds a fact said in other words. A request for other dimensions is refused. LightRAG
    sends the same entity and relation texts again and again; each is embedded once (~20 ms
    of C a text), which keeps the tests that index many users' words within a CI's time."""
    from bot.adapters.embeddings.embedded import DIMENSIONS, embed_with, load_e5

    model = load_e5()
    known: dict[str, list[float]] = {}
    lock = threading.Lock()

    def embed(texts: list[str], dimensions: int | None) -> list[list[float]]:
        if dimensions not in (None, DIMENSIONS):
            raise ValueError(f"the embedded model has {DIMENSIONS} dimensions, not {dimensions}")
        with lock:
            new = list(dict.fromkeys(text for text in texts if text not in known))
            if new:
                known.update(zip(new, embed_with(model, new).tolist(), strict=True))
            return [known[text] for text in texts]

    return embed


def embed_text(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words embedding: texts sharing words point the same way."""
    vector = [0.0] * dim
    for word in text.lower().split():
        word = word.strip(".,!?:;\"'()[]")
        if word:
            vector[hash_word(word) % dim] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def hash_word(word: str) -> int:
    value = 2166136261
    for byte in word.encode("utf-8"):
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return value


def _error(status: int, message: str) -> web.Response:
    body = {"error": {"message": message, "type": "fake", "code": None}}
    return web.json_response(body, status=status)


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}


def _longest_bound(schema: object) -> int:
    """The largest `maxLength` anywhere in a tool list or schema (0: none)."""
    if isinstance(schema, dict):
        own = schema.get("maxLength")
        bound = own if isinstance(own, int) else 0
        return max([bound, *(_longest_bound(value) for value in schema.values())])
    if isinstance(schema, list):
        return max([0, *(_longest_bound(value) for value in schema)])
    return 0
