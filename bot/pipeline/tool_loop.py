"""Order 30: call the LLM, run the tools it asks for, repeat until a final answer or a limit."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from bot.compaction import SummaryFailed
from bot.config.model import LlmConfig
from bot.conversation import ChatMessage, Session
from bot.i18n.catalogue import notices
from bot.pipeline.context import TurnContext
from bot.ports.llm import (
    ContextOverflow,
    EmptyAnswer,
    ImageInput,
    LlmError,
    LlmPort,
    LlmRequest,
    LlmResponse,
    TextListener,
    ToolSpec,
)
from bot.ports.models import ChatModelChoice
from bot.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)


class TurnPrompt(Protocol):
    """Who builds the system prompt (context building), asked again when a tool changed
    what it holds: the chat's skill."""

    async def refreshed(self, ctx: TurnContext) -> str: ...


class HistoryCompactor(Protocol):
    """Who folds a chat's older turns into its rolling summary (`SessionCompactor`), asked
    when the prompt no longer fits the model's context window."""

    async def compact_now(self, session: Session, limits: LlmConfig, billed_to: str) -> int: ...


class TurnLimitReached(Exception):
    """A per-turn limit stopped the loop; the message is for the user."""


class ToolLoopSystem:
    """Produces `ctx.final_text`, or `ctx.notice` when the LLM fails or a limit is reached.

    Messages of the turn are collected apart and handed over only with a final answer, so the
    session never holds a tool call without its result or a turn cut off half-way.
    """

    name = "ToolLoop"
    order = 30

    def __init__(
        self,
        llm: LlmPort,
        tools: ToolRegistry,
        models: ChatModelChoice | None = None,
        prompt: TurnPrompt | None = None,
        compactor: HistoryCompactor | None = None,
    ) -> None:
        self._llm = llm
        self._tools = tools
        self._models = models
        self._prompt = prompt
        self._compactor = compactor

    def should_process(self, ctx: TurnContext) -> bool:
        return ctx.final_text is None and ctx.notice is None

    async def process(self, ctx: TurnContext) -> None:
        limits = ctx.config.llm
        try:
            async with asyncio.timeout(limits.turn_deadline_seconds):
                messages = await self._run(ctx, limits)
        except LlmError as exc:
            # Nothing of a failed call is kept: the user's message waits unanswered in the
            # session (the adapter joins it to the next one), and the next turn starts afresh.
            log.warning("[ToolLoop] LLM failed: %s", exc)
            ctx.notice = exc.user_message
            return
        except TurnLimitReached as exc:
            ctx.notice = str(exc)
            return
        except TimeoutError:
            log.warning("[ToolLoop] turn deadline of %ss reached", limits.turn_deadline_seconds)
            ctx.notice = notices.turn_deadline(limits.turn_deadline_seconds)
            return
        ctx.turn_messages = messages
        ctx.final_text = messages[-1].content or ""

    async def _run(self, ctx: TurnContext, limits: LlmConfig) -> list[ChatMessage]:
        prompt = _prompt(ctx.system_prompt, ctx, limits)
        turn: list[ChatMessage] = []
        compacted = False
        tool_calls_made = 0
        on_text = _showing(ctx) if ctx.stream is not None else None
        tool_context = ToolContext(
            ctx.user_id,
            ctx.session.key,
            ctx.memory_scope,
            chat=ctx.session,
            address=ctx.message.address,
            operator=ctx.message.operator,
            guest=ctx.message.guest,
        )
        specs = self._tools.specs(ctx.config.tools, tool_context.shared)
        model = limits.model
        if self._models is not None:
            model = self._models.model_for(ctx.session.key, limits)

        for _ in range(limits.max_tool_iterations):
            request = _request(limits, model, prompt + turn, specs, ctx.images, ctx.user_id)
            try:
                response = await self._llm.complete(request, on_text)
            except (ContextOverflow, EmptyAnswer) as exc:
                if compacted or not await self._compacted(ctx, limits, exc):
                    raise
                compacted = True
                prompt = _prompt(await self._system_prompt(ctx), ctx, limits)
                request = _request(limits, model, prompt + turn, specs, ctx.images, ctx.user_id)
                response = await self._llm.complete(request, on_text)
            if response.truncated:  # a cut tool call's arguments are broken: answer instead
                turn.append(ChatMessage.assistant(with_cut_note(response.text, limits)))
                return turn
            if response.cut_by_token_limit:
                log.warning("[ToolLoop] answer cut by the token limit (llm.maxOutputTokens)")
                turn.append(ChatMessage.assistant(with_token_limit_note(response.text)))
                return turn
            if not response.tool_calls:
                turn.append(ChatMessage.assistant(response.text or ""))
                return turn
            tool_calls_made += len(response.tool_calls)
            if tool_calls_made > limits.max_tool_calls:
                log.warning("[ToolLoop] llm.maxToolCalls (%d) reached", limits.max_tool_calls)
                raise TurnLimitReached(notices.too_many_tool_calls(limits.max_tool_calls))
            turn.append(ChatMessage.assistant(response.text, response.tool_calls))
            skill = ctx.session.active_skill
            turn += await self._run_tools(ctx, limits, response, tool_context)
            if self._prompt is not None and ctx.session.active_skill != skill:
                # A skill switched on or off: the next call sees its instructions, or not.
                prompt[0] = ChatMessage(role="system", content=await self._prompt.refreshed(ctx))

        log.warning("[ToolLoop] llm.maxToolIterations (%d) reached", limits.max_tool_iterations)
        raise TurnLimitReached(notices.too_many_model_calls(limits.max_tool_iterations))

    async def _compacted(self, ctx: TurnContext, limits: LlmConfig, exc: LlmError) -> bool:
        """After a context overflow (or an empty answer, which is how llama.cpp's server
        says so inside a stream): fold the chat's older turns into its rolling summary so the
        call can be made once more; False when there was nothing to fold."""
        if self._compactor is None:
            return False
        kind = "too long" if isinstance(exc, ContextOverflow) else "answered with nothing"
        try:
            folded = await self._compactor.compact_now(ctx.session, limits, ctx.user_id)
        except SummaryFailed as failure:
            log.warning("[ToolLoop] the prompt was %s; no summary (%s)", kind, failure)
            return False
        if folded:
            log.warning(
                "[ToolLoop] the prompt was %s; %d older messages folded into the summary, "
                "asking again",
                kind,
                folded,
            )
        return folded > 0

    async def _system_prompt(self, ctx: TurnContext) -> str:
        """The system prompt again, now holding the new summary."""
        return ctx.system_prompt if self._prompt is None else await self._prompt.refreshed(ctx)

    async def _run_tools(
        self, ctx: TurnContext, limits: LlmConfig, response: LlmResponse, tool_context: ToolContext
    ) -> list[ChatMessage]:
        results = await asyncio.gather(
            *(
                self._tools.execute(
                    call,
                    tool_context,
                    ctx.config.tools,
                    limits.tool_timeout_seconds,
                    limits.tool_output_max_chars,
                )
                for call in response.tool_calls
            )
        )
        messages = []
        for call, result in zip(response.tool_calls, results, strict=True):
            log.info("[ToolLoop] tool %s -> %d chars", call.name, len(result))
            messages.append(ChatMessage.tool_result(call.id, result))
        return messages


def _showing(ctx: TurnContext) -> TextListener:
    """Streams the answer into the reply, noting what was shown (a stopped turn keeps it)."""
    assert ctx.stream is not None
    update = ctx.stream.update

    async def show(text: str) -> None:
        ctx.streamed_text = text
        await update(text)

    return show


def _prompt(system: str, ctx: TurnContext, limits: LlmConfig) -> list[ChatMessage]:
    history = ctx.session.recent_history(limits.history_token_budget)
    return [ChatMessage(role="system", content=system), *history]


def with_token_limit_note(text: str | None) -> str:
    """`text` cut by the model's own output limit, saying so at its end."""
    note = notices.llm_token_limit_cut()
    return f"{text.rstrip()}\n\n{note}" if text and text.strip() else note


def with_cut_note(text: str | None, limits: LlmConfig) -> str:
    """`text` cut at `llm.maxOutputChars`, saying so at its end."""
    note = notices.answer_cut(limits.max_output_chars)
    return f"{text.rstrip()}\n\n{note}" if text and text.strip() else note


def _request(
    limits: LlmConfig,
    model: str,
    messages: list[ChatMessage],
    specs: list[ToolSpec],
    images: list[ImageInput],
    user_id: str,
) -> LlmRequest:
    return LlmRequest(
        messages=messages,
        model=model,
        temperature=limits.temperature,
        max_output_tokens=limits.max_output_tokens,
        max_output_chars=limits.max_output_chars,
        timeout_seconds=limits.request_timeout_seconds,
        tools=specs,
        retry_attempts=limits.retry_attempts,
        retry_max_seconds=limits.retry_max_seconds,
        images=tuple(images),
        billed_to=user_id,
    )
