"""The LLM port with a meter: each call's tokens counted against whom it is for, and no call
at all once that user has used their daily budget (`usage.dailyTokenBudget`,
`usage.dailyCostBudget`).

Every LLM call of the bot goes through here: the turn's tool loop, compaction's summary and
memory extraction; each request says whom it is billed to (`LlmRequest.billed_to`). A server
that does not report usage is counted at about four characters a token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

from bot.config.model import UsageConfig
from bot.conversation.messages import CHARS_PER_TOKEN
from bot.i18n.catalogue import notices
from bot.ports.llm import LlmError, LlmPort, LlmRequest, LlmResponse, TextListener, TokenUsage
from bot.ports.metrics import NO_METRICS, LlmCallObserver, LlmOutcome
from bot.usage.ledger import Tally, UsageRecords, total

log = logging.getLogger(__name__)


class BudgetReached(LlmError):
    """The user has used their daily budget: no LLM call is made for them until midnight UTC."""


class MeteredLlm:
    """`LlmPort` around another: budget check before, usage recorded after (in the ledger,
    and as counts without the user for `observer`, the operators' metrics)."""

    def __init__(
        self,
        inner: LlmPort,
        ledger: UsageRecords,
        config: Callable[[], UsageConfig],
        observer: LlmCallObserver = NO_METRICS,
    ) -> None:
        self._inner = inner
        self._ledger = ledger
        self._config = config
        self._observer = observer

    async def complete(
        self, request: LlmRequest, on_text: TextListener | None = None
    ) -> LlmResponse:
        who = request.billed_to
        if who is not None:
            refusal = budget_refusal(await self._ledger.today(who), self._config())
            if refusal is not None:
                log.info("[Usage] %s is at the daily budget; no LLM call", who)
                self._observer.llm_called(request.model, LlmOutcome.REFUSED, 0, 0)
                raise BudgetReached(refusal)
        shown = _Shown(on_text)
        try:
            # no listener, no stream: a caller that streams nothing must not be made to
            response = await self._inner.complete(request, shown.listen if on_text else None)
        except asyncio.CancelledError:
            # A stopped stream was still paid for: what was asked, and what came back.
            self._count(who, request.model, _estimate(request, shown.text), LlmOutcome.CANCELLED)
            raise
        except LlmError:
            # A failed call's output is never billed (an error event mid-stream, an empty
            # answer): the user has no answer. A stream that had begun read the prompt.
            if shown.text:
                asked = _estimate(request, "").prompt_tokens
                self._count(who, request.model, TokenUsage(asked, 0), LlmOutcome.ERROR)
            else:
                self._observer.llm_called(request.model, LlmOutcome.ERROR, 0, 0)
            raise
        self._count(who, request.model, _used(request, response), LlmOutcome.OK)
        return response

    def _count(self, who: str | None, model: str, used: TokenUsage, outcome: LlmOutcome) -> None:
        """In the user's ledger, and in the operators' metrics without the user."""
        self._ledger.record(who or "(unbilled)", model, used)
        self._observer.llm_called(model, outcome, used.prompt_tokens, used.completion_tokens)


class _Shown:
    """Keeps the text streamed so far, passing it on: a call cut short is counted by it."""

    def __init__(self, on_text: TextListener | None) -> None:
        self._on_text = on_text
        self.text = ""

    async def listen(self, text: str) -> None:
        self.text = text
        if self._on_text is not None:
            await self._on_text(text)


def budget_refusal(today: dict[str, Tally], config: UsageConfig) -> str | None:
    """What to tell a user at their daily budget; None while they are under it."""
    if config.daily_token_budget and total(today).tokens >= config.daily_token_budget:
        return notices.token_budget_reached(config.daily_token_budget)
    if config.daily_cost_budget and spent(today, config) >= config.daily_cost_budget:
        return notices.cost_budget_reached(f"{config.daily_cost_budget:g}", config.currency)
    return None


def spent(today: dict[str, Tally], config: UsageConfig) -> float:
    """The estimated cost of `today`, models without a price counting nothing."""
    costs = (config.cost(m, t.prompt_tokens, t.completion_tokens) for m, t in today.items())
    return sum(cost for cost in costs if cost is not None)


def _used(request: LlmRequest, response: LlmResponse) -> TokenUsage:
    used = response.usage
    if used is None:
        calls = "".join(c.arguments for c in response.tool_calls)
        used = _estimate(request, (response.text or "") + calls)
    return replace(used, cut=True) if response.cut_by_token_limit else used


def _estimate(request: LlmRequest, answered: str) -> TokenUsage:
    """About four characters a token, for servers that report no usage and cut-short calls."""
    asked = sum(len(m.content or "") for m in request.messages)
    return TokenUsage(asked // CHARS_PER_TOKEN + 1, len(answered) // CHARS_PER_TOKEN + 1)
