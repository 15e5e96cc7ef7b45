import pytest

from bot.tools.calculator import CalculatorArguments, CalculatorTool, evaluate
from bot.tools.current_time import CurrentTimeArguments, CurrentTimeTool
from bot.tools.registry import ToolContext

CTX = ToolContext(user_id="u", session_key="k")


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(17.5 * 3) / 2", 26.25),
        ("2 ** 10", 1024),
        ("-sqrt(16)", -4.0),
        ("max(1, 5, 3)", 5),
        ("7 // 2 + 7 % 2", 4),
        ("round(pi, 2)", 3.14),
    ],
)
def test_calculator_evaluates_arithmetic(expression, value):
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("__import__('os')", "unsupported"),
        ("1/0", "division by zero"),
        ("9 ** 9 ** 9", "exponent"),
        ("99999999 ** 9999", "too large"),
        ("open('x')", "unsupported"),
        ("1 +", "not an arithmetic"),
        ("x" * 600, "longer"),
    ],
)
def test_calculator_refuses_anything_but_safe_arithmetic(expression, problem):
    with pytest.raises(ValueError, match=problem):
        evaluate(expression)


async def test_calculator_tool_reports_expression_and_value():
    assert await CalculatorTool().run(CalculatorArguments(expression="6*7"), CTX) == "6*7 = 42"


async def test_current_time_in_a_zone():
    result = await CurrentTimeTool().run(CurrentTimeArguments(timezone="Asia/Tokyo"), CTX)
    assert "time zone Asia/Tokyo" in result and "JST" in result


async def test_current_time_rejects_unknown_zone():
    result = await CurrentTimeTool().run(CurrentTimeArguments(timezone="Mars/Base"), CTX)
    assert result.startswith("Error: unknown time zone 'Mars/Base'")
