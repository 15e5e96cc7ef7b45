import asyncio
import os
import time

import pytest

from bot.config.model import ToolsConfig
from bot.conversation import MemoryScope, ToolCall
from bot.isolated import IsolatedFailure, IsolatedScript
from bot.tools.calculator import CalculatorArguments, CalculatorTool, evaluate
from bot.tools.current_time import CurrentTimeArguments, CurrentTimeTool
from bot.tools.registry import ToolContext, ToolRegistry

CTX = ToolContext(user_id="u", session_key="k", memory_scope=MemoryScope("u", "u"))


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


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("round(1, -10**7)", "digits"),
        ("round(1, -10**9)", "digits"),
        ("round(2.5, 10**9)", "digits"),
        ("round(1, 0.5)", "digits"),
        ("floor(1, 2)", "one number"),
        ("10**4000 * 10**4000", "too large"),
        ("4**6995 * 1024", "too large"),
        ("4**6999 + 4**6999 + 4**6999 + 4**6999", "too large"),
        ("(-8) ** (1/3)", "not a real number"),
    ],
)
def test_calculator_refuses_costly_expressions_at_once(expression, problem):
    started = time.monotonic()
    with pytest.raises(ValueError, match=problem):
        evaluate(expression)
    assert time.monotonic() - started < 0.5


async def test_the_calculator_never_holds_up_the_event_loop():
    """While the tool works on the worst expression, other chats' coroutines keep running."""
    gaps, running = [], True

    async def tick():
        last = time.monotonic()
        while running:
            await asyncio.sleep(0.01)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticker = asyncio.create_task(tick())
    with pytest.raises(ValueError, match="digits"):
        await CalculatorTool().run(CalculatorArguments(expression="round(1, -10**7)"), CTX)
    running = False
    await ticker
    assert gaps and max(gaps) < 0.5


def endless_script(folder):
    """A child that says its pid, then computes forever."""
    script = folder / "endless.py"
    pid_file = folder / "pid"
    script.write_text(f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                      "while True:\n    pass\n")  # fmt: skip
    return script, pid_file


def assert_gone(pid_file):
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


async def test_isolated_work_past_its_limit_is_killed(tmp_path):
    script, pid_file = endless_script(tmp_path)
    started = time.monotonic()
    with pytest.raises(IsolatedFailure, match="longer than 1 seconds"):
        await IsolatedScript(script, 1.0).run("")
    assert time.monotonic() - started < 3
    assert_gone(pid_file)


async def test_a_tool_timeout_stops_isolated_work_at_once(tmp_path):
    script, pid_file = endless_script(tmp_path)

    class EndlessTool:
        name, description, arguments = "endless", "never ends", CalculatorArguments

        async def run(self, args, context):
            return await IsolatedScript(script, 60).run(args.expression)

    call = ToolCall(id="c", name="endless", arguments='{"expression": "x"}')
    result = await ToolRegistry([EndlessTool()]).execute(call, CTX, ToolsConfig(), 1.0, 1000)
    assert result == "Error: endless timed out after 1 seconds."
    assert_gone(pid_file)


async def test_where_no_child_process_can_start_the_checked_evaluator_runs_in_the_bot(caplog):
    class NoProcesses:
        async def run(self, text):
            raise BlockingIOError(11, "Resource temporarily unavailable")

    tool = CalculatorTool(evaluator=NoProcesses())
    assert await tool.run(CalculatorArguments(expression="6*7"), CTX) == "6*7 = 42"
    with pytest.raises(ValueError, match="digits"):
        await tool.run(CalculatorArguments(expression="round(1, -10**9)"), CTX)
    assert "calculator evaluates in the bot itself" in caplog.text


async def test_calculator_tool_reports_expression_and_value():
    assert await CalculatorTool().run(CalculatorArguments(expression="6*7"), CTX) == "6*7 = 42"


async def test_current_time_in_a_zone():
    result = await CurrentTimeTool().run(CurrentTimeArguments(timezone="Asia/Tokyo"), CTX)
    assert "time zone Asia/Tokyo" in result and "JST" in result


async def test_current_time_rejects_unknown_zone():
    result = await CurrentTimeTool().run(CurrentTimeArguments(timezone="Mars/Base"), CTX)
    assert result.startswith("Error: unknown time zone 'Mars/Base'")


@pytest.mark.parametrize("depth", [100_000, 5_000])
async def test_arguments_nested_too_deeply_are_refused_with_a_clear_error(depth):
    nested = '{"expression": ' + "[" * depth + "]" * depth + "}"
    call = ToolCall(id="c1", name="calculator", arguments=nested)
    result = await ToolRegistry([CalculatorTool()]).execute(call, CTX, ToolsConfig(), 5.0, 1000)
    assert result == "Error: the arguments are nested too deeply. Send a flat JSON object."
