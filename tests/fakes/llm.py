"""An in-memory LlmPort for unit tests: replays scripted responses and records requests."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from bot.conversation import ChatMessage, ToolCall
from bot.i18n.catalogue import notices
from bot.ports.llm import (
    ContextOverflow,
    EmptyAnswer,
    LlmError,
    LlmRequest,
    LlmResponse,
    TextListener,
)

Step = LlmResponse | Exception | float
"""A response, an exception to raise, or seconds to sleep before the next step."""


def echo(text: str) -> str:
    """What every echoing fake LLM answers to `text`, the last user message it was sent."""
    return f"echo: {text}"


ANSWER_SCHEMA: dict[str, Any] = {
    "title": "answer",
    "type": "object",
    "properties": {"word": {"type": "string"}},
    "required": ["word"],
    "additionalProperties": False,
}
"""A small structured-output schema for adapter tests."""


def chat_request(*messages: ChatMessage, **overrides: Any) -> LlmRequest:
    """A small chat request for adapter tests: a system prompt, then `messages` (a "hello"
    when none), four attempts within 30 s; `overrides` replace any field."""
    asked = list(messages) or [ChatMessage.user("hello")]
    values: dict[str, Any] = dict(
        messages=[ChatMessage(role="system", content="sys"), *asked],
        model="fake-model",
        temperature=0.2,
        max_output_tokens=100,
        timeout_seconds=5,
        retry_attempts=4,
        retry_max_seconds=30,
    )
    values.update(overrides)
    return LlmRequest(**values)


def text(answer: str) -> LlmResponse:
    return LlmResponse(text=answer)


def calls(*pairs: tuple[str, str]) -> LlmResponse:
    return LlmResponse(
        text=None,
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(pairs)],
    )


class ScriptedLlm:
    """Answers from a script; once it runs out, echoes the last user message."""

    def __init__(self, *steps: Step) -> None:
        self.steps: deque[Step] = deque(steps)
        self.requests: list[LlmRequest] = []

    async def complete(
        self, request: LlmRequest, on_text: TextListener | None = None
    ) -> LlmResponse:
        self.requests.append(request)
        delays = []
        while self.steps and isinstance(self.steps[0], float | int):
            delays.append(float(self.steps.popleft()))  # type: ignore[arg-type]
        await asyncio.sleep(sum(delays))
        if self.steps:
            step = self.steps.popleft()
            if isinstance(step, Exception):
                raise step
            assert isinstance(step, LlmResponse)
            response = step
        else:
            last_user = [m for m in request.messages if m.role == "user"][-1]
            response = text(echo(last_user.content))
        if on_text is not None and response.text:
            await on_text(response.text)
        return response


def llm_down(message: str = "The language model service is failing (HTTP 503).") -> LlmError:
    return LlmError(message)


def context_overflow() -> ContextOverflow:
    """What the adapter raises when the server says the prompt is too long (a 400 naming the
    context length)."""
    return ContextOverflow(notices.llm_context_overflow(), "HTTP 400 context_length_exceeded")


def empty_answer() -> EmptyAnswer:
    """What the adapter raises for an answer with nothing in it (llama.cpp's empty 200)."""
    return EmptyAnswer(notices.llm_empty(), "a stream of 0 events")
