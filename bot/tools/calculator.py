"""Exact arithmetic, so the model does not guess at sums. Evaluates a safe subset of Python."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from bot.tools.registry import ToolContext

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
MAX_EXPRESSION_LENGTH = 500
MAX_EXPONENT = 10_000
MAX_RESULT_BITS = 100_000


class CalculatorArguments(BaseModel):
    expression: str = Field(description="Arithmetic, e.g. (17.5 * 3) / 2 or sqrt(2) ** 10.")


class CalculatorTool:
    name = "calculator"
    description = (
        "Evaluates an arithmetic expression exactly: + - * / // % **, parentheses, "
        "sqrt log log10 exp sin cos tan abs round min max floor ceil, pi and e."
    )
    arguments = CalculatorArguments

    async def run(self, args: CalculatorArguments, context: ToolContext) -> str:
        return f"{args.expression} = {evaluate(args.expression)}"


def evaluate(expression: str) -> int | float:
    """Value of `expression`; raises ValueError for anything but plain arithmetic."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression ({exc.msg})") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        try:
            return _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        function = _FUNCTIONS.get(node.func.id)
        if function is not None and not node.keywords:
            return function(*(_eval(arg) for arg in node.args))
    raise ValueError(f"unsupported element: {ast.unparse(node)!r}")


def _check_power(base: Any, exponent: Any) -> None:
    """Refuse powers whose result would take seconds or gigabytes to compute."""
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"exponent larger than {MAX_EXPONENT}")
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if base.bit_length() * exponent > MAX_RESULT_BITS:
            raise ValueError("result too large")
