"""Compaction: older turns become a rolling summary instead of silently leaving the session.

After each turn, a session whose history has passed `llm.historyTokenBudget` (or holds more
than `llm.sessionMaxMessages` messages) is compacted: the oldest whole turns, down to half of
both, are summarised by the LLM together with the summary so far, and leave the session. The
summary is bounded (`llm.summaryMaxTokens`), so the session file is bounded however long the
chat runs, and the prompt carries it ahead of the recent turns. Halving means one summary call
every so many turns, not one per turn. When the summary cannot be had (LLM down, time-out),
the same turns are dropped, with one log line: the file must stay bounded. `/compact` folds
every turn but the last into the summary on demand, and drops nothing when the LLM fails.
"""

from __future__ import annotations

import logging

from bot.chat_locks import ChatLocks
from bot.config.model import LlmConfig
from bot.conversation.messages import CHARS_PER_TOKEN, ChatMessage
from bot.conversation.session import Session
from bot.ports.llm import LlmError, LlmPort, LlmRequest

log = logging.getLogger(__name__)

SUMMARISER_PROMPT = (
    "You keep the running summary of a conversation between a user and an AI assistant, "
    "because its older part no longer fits in the assistant's memory. Merge the summary so "
    "far with the newer part of the conversation into one updated summary. Keep what the "
    "assistant needs to go on: what the user said about themselves and what they want, "
    "questions asked and the answers given, decisions, open tasks; names, numbers and dates "
    "exactly. Leave out small talk. Write in the conversation's language, in the third "
    "person, at most {words} words. Answer with the summary alone."
)
MESSAGE_MAX_CHARS = 2_000
"""Each message is cut here in what the summariser reads: a pasted log is not worth more."""
SUMMARY_RETRY_ATTEMPTS = 2
SUMMARY_RETRY_SECONDS = 10.0


class SummaryFailed(Exception):
    """The LLM gave no usable summary; the message says why, for the log."""


class SessionCompactor:
    """Folds a session's oldest turns into its rolling summary, one chat at a time."""

    def __init__(self, llm: LlmPort) -> None:
        self._llm = llm
        self._compacting = ChatLocks()

    @staticmethod
    def over_budget(session: Session, limits: LlmConfig) -> bool:
        if len(session.messages) > limits.session_max_messages:
            return True
        return session.history_tokens() > limits.history_token_budget

    async def keep_bounded(
        self, session: Session, limits: LlmConfig, summarise: bool, billed_to: str
    ) -> int:
        """After a turn of `billed_to`: compact a session past its budget; returns how many
        messages left it. `summarise` False (shutting down) drops them without an LLM call."""
        if not self.over_budget(session, limits):
            return 0
        async with self._compacting.hold(session.key):
            cut = session.cut_for(
                limits.history_token_budget // 2, limits.session_max_messages // 2
            )
            if not cut:
                return 0
            if summarise:
                try:
                    return await self._fold(session, cut, limits, billed_to)
                except SummaryFailed as exc:
                    reason = str(exc)
            else:
                reason = "shutting down"
            del session.messages[:cut]
            log.warning(
                "[Session] %s: no summary of %d older messages (%s); they were dropped",
                session.key,
                cut,
                reason,
            )
            return cut

    async def compact_now(self, session: Session, limits: LlmConfig, billed_to: str) -> int:
        """`/compact`: fold every turn but the last into the summary; returns how many
        messages went (0: nothing to fold). Raises `SummaryFailed`, dropping nothing."""
        async with self._compacting.hold(session.key):
            cut = session.cut_for(0, 0)
            return await self._fold(session, cut, limits, billed_to) if cut else 0

    async def _fold(self, session: Session, cut: int, limits: LlmConfig, billed_to: str) -> int:
        older = session.messages[:cut]
        summary = await self._summarise(session.summary, older, limits, billed_to)
        if len(session.messages) < cut or any(
            a is not b for a, b in zip(older, session.messages[:cut], strict=True)
        ):
            raise SummaryFailed("the conversation changed meanwhile (/forget)")
        session.fold_into_summary(cut, summary)
        log.info("[Session] %s: %d older messages folded into the summary", session.key, cut)
        return cut

    async def _summarise(
        self, summary: str, older: list[ChatMessage], limits: LlmConfig, billed_to: str
    ) -> str:
        words = limits.summary_max_tokens * 3 // 4
        request = LlmRequest(
            messages=[
                ChatMessage(role="system", content=SUMMARISER_PROMPT.format(words=words)),
                ChatMessage.user(_material(summary, older, limits)),
            ],
            model=limits.summary_model or limits.model,
            temperature=0.2,
            max_output_tokens=limits.summary_max_tokens,
            max_output_chars=limits.summary_max_tokens * CHARS_PER_TOKEN * 2,
            timeout_seconds=limits.request_timeout_seconds,
            retry_attempts=SUMMARY_RETRY_ATTEMPTS,
            retry_max_seconds=SUMMARY_RETRY_SECONDS,
            billed_to=billed_to,
        )
        try:
            response = await self._llm.complete(request)
        except LlmError as exc:
            raise SummaryFailed(str(exc)) from exc
        text = (response.text or "").strip()
        if not text:
            raise SummaryFailed("the LLM answered with no text")
        return text


def _material(summary: str, older: list[ChatMessage], limits: LlmConfig) -> str:
    """What the summariser reads: the summary so far and the turns to fold in, the newest
    kept when they are longer than a history budget (a session from before compaction)."""
    lines = [_line(message) for message in older]
    budget = max(limits.history_token_budget * CHARS_PER_TOKEN, 16_000)
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) > budget:
            kept.append("[… earlier messages left out …]")
            break
        kept.append(line)
        used += len(line)
    transcript = "\n".join(reversed(kept))
    return (
        f"Summary so far:\n{summary or '(none yet)'}\n\n"
        f"Newer part of the conversation:\n{transcript}"
    )


def _line(message: ChatMessage) -> str:
    text = (message.content or "").strip()
    if len(text) > MESSAGE_MAX_CHARS:
        text = text[:MESSAGE_MAX_CHARS] + " […]"
    if message.role == "tool":
        return f"Tool result: {text}"
    if message.role == "assistant":
        calls = ", ".join(call.name for call in message.tool_calls)
        said = f"Assistant: {text}" if text else "Assistant:"
        return f"{said} (called {calls})" if calls else said
    return f"{message.role.capitalize()}: {text}"
