"""Exact arithmetic, so the model does not guess at sums. Evaluates a safe subset of Python."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import BaseModel, Field

from bot.isolated import IsolatedScript
from bot.tools import arithmetic
from bot.tools.arithmetic import evaluate
from bot.tools.registry import ToolContext

log = logging.getLogger(__name__)

LIMIT_SECONDS = 5.0
"""A child process evaluates each expression and is killed after this; the checks in
`arithmetic` keep every expression far below it."""


class CalculatorArguments(BaseModel):
    expression: str = Field(description="Arithmetic, e.g. (17.5 * 3) / 2 or sqrt(2) ** 10.")


class CalculatorTool:
    """Evaluates in a child process (`IsolatedScript`), so not even an expression that
    slipped past the evaluator's checks could hold up other chats."""

    name = "calculator"
    description = (
        "Evaluates an arithmetic expression exactly: + - * / // % **, parentheses, "
        "sqrt log log10 exp sin cos tan abs round min max floor ceil, pi and e."
    )
    arguments = CalculatorArguments

    def __init__(self, evaluator: IsolatedScript | None = None) -> None:
        self._evaluator = evaluator or IsolatedScript(Path(arithmetic.__file__), LIMIT_SECONDS)

    async def run(self, args: CalculatorArguments, context: ToolContext) -> str:
        try:
            output = await self._evaluator.run(args.expression)
        except OSError as exc:  # no child process here (limits, sandbox): the checks still hold
            log.warning("[Tools] calculator evaluates in the bot itself: %s", exc)
            return f"{args.expression} = {evaluate(args.expression)}"
        answer = json.loads(output)
        if "error" in answer:
            raise ValueError(answer["error"])
        return f"{args.expression} = {answer['value']}"


__all__ = ["CalculatorArguments", "CalculatorTool", "evaluate"]
