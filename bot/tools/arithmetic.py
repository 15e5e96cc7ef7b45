"""The calculator's evaluator: a safe subset of Python arithmetic, in bounded time and memory.

Every operation is checked before it runs, so no expression can take more than milliseconds:
integers stay within `MAX_INT_BITS` (they still print), powers within `MAX_EXPONENT`, and
`round` within `MAX_ROUND_DIGITS` digits (`round(1, -10**9)` would build a number of a
billion digits first). Only the standard library is imported: the calculator runs this file
as `python -I -S arithmetic.py` in a child process of its own (`bot/isolated.py`),
expression on stdin, JSON on stdout.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import sys
from collections.abc import Callable
from typing import Any

MAX_EXPRESSION_LENGTH = 500
MAX_EXPONENT = 10_000
MAX_INT_BITS = 14_000
"""About 4200 digits: below the 4300 that Python turns into text by default."""
MAX_ROUND_DIGITS = 100
CPU_SECONDS = 5
MEMORY_BYTES = 512 * 1024 * 1024
"""Limits of the child process, should an expression slip past the checks above."""

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
_ONE_ARGUMENT = {"sqrt", "log10", "exp", "sin", "cos", "tan", "abs", "floor", "ceil"}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def evaluate(expression: str) -> int | float:
    """Value of `expression`; raises ValueError for anything but plain, affordable arithmetic
    (and ArithmeticError for what mathematics refuses, such as exp(1000))."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression ({exc.msg})") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return _checked(node.value)
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        elif isinstance(node.op, ast.Mult):
            _check_product(left, right)
        try:
            return _checked(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name in _FUNCTIONS and not node.keywords:
            args = [_eval(arg) for arg in node.args]
            _check_call(name, args)
            return _checked(_FUNCTIONS[name](*args))
    raise ValueError(f"unsupported element: {ast.unparse(node)!r}")


def _checked(value: Any) -> Any:
    if isinstance(value, complex):
        raise ValueError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ValueError(f"result too large (more than {MAX_INT_BITS} bits, about 4200 digits)")
    return value


def _check_power(base: Any, exponent: Any) -> None:
    """Refuse powers whose result would take seconds or gigabytes to compute."""
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"exponent larger than {MAX_EXPONENT}")
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if (base.bit_length() - 1) * exponent > MAX_INT_BITS:
            raise ValueError("result too large")


def _check_product(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
            raise ValueError("result too large")


def _check_call(name: str, args: list[Any]) -> None:
    if name in _ONE_ARGUMENT and len(args) != 1:
        raise ValueError(f"{name} takes one number")
    if name == "round" and len(args) == 2:
        digits = args[1]
        if not isinstance(digits, int) or abs(digits) > MAX_ROUND_DIGITS:
            limit = MAX_ROUND_DIGITS
            raise ValueError(f"round's digits must be a whole number from -{limit} to {limit}")


def _limit_this_process() -> None:
    import resource  # Unix only; the parent never imports it

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def main() -> None:
    """The child process: one expression on stdin, `{"value"|"error": text}` on stdout."""
    _limit_this_process()
    try:
        answer = {"value": str(evaluate(sys.stdin.read()))}
    except Exception as exc:  # every failure is an answer, never a traceback
        answer = {"error": str(exc) or type(exc).__name__}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
