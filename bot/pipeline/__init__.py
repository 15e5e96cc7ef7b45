"""The turn pipeline: context, the System protocol, the runner, and the systems."""

from bot.pipeline.context import SystemFailure, TurnContext
from bot.pipeline.pipeline import DuplicateOrderError, Pipeline, System

__all__ = ["DuplicateOrderError", "Pipeline", "System", "SystemFailure", "TurnContext"]
