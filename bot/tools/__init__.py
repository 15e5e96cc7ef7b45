"""Tools the LLM may call, one file each, and the registry that runs them."""

from bot.tools.calculator import CalculatorTool
from bot.tools.current_time import CurrentTimeTool
from bot.tools.registry import Tool, ToolContext, ToolRegistry


def builtin_tools() -> list[Tool]:
    """The tools every bot has; later features register more on the same registry."""
    return [CurrentTimeTool(), CalculatorTool()]


__all__ = ["Tool", "ToolContext", "ToolRegistry", "builtin_tools"]
