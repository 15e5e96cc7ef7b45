"""What the core reports for operators' metrics, one narrow protocol per reporter.

The pipeline and the LLM meter report here; the Prometheus adapter (`bot/ops/metrics.py`)
implements both when the HTTP listener is on, `NO_METRICS` otherwise. Nothing reported names a
user or carries a user's words: only system names, model names and outcomes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol


class TurnOutcome(StrEnum):
    OK = "ok"
    """Every system that ran succeeded."""
    FAILED = "failed"
    """At least one system raised (the turn still replied: see `Pipeline.run`)."""
    CANCELLED = "cancelled"
    """Stopped by `/stop`, `/new` or a shutdown."""


class LlmOutcome(StrEnum):
    OK = "ok"
    ERROR = "error"
    """No answer, retries included (`LlmError`)."""
    REFUSED = "refused"
    """Not sent: the user is at their daily budget."""
    CANCELLED = "cancelled"
    """Stopped while it ran (`/stop`, a shutdown); its tokens are estimated."""


class PipelineObserver(Protocol):
    """`Pipeline.run` reports each system's time and each turn's end."""

    def system_ran(self, system: str, seconds: float, failed: bool) -> None: ...

    def turn_ran(self, seconds: float, outcome: TurnOutcome) -> None: ...


class LlmCallObserver(Protocol):
    """`MeteredLlm` reports each call: model, outcome and tokens (0 when none were used)."""

    def llm_called(
        self, model: str, outcome: LlmOutcome, prompt_tokens: int, completion_tokens: int
    ) -> None: ...


class MetricsObserver(PipelineObserver, LlmCallObserver, Protocol):
    """Both, as `BotApp.build` holds them before handing each reporter its own."""


class NoMetrics:
    """Both observers, recording nothing: the default when no HTTP listener is configured."""

    def system_ran(self, system: str, seconds: float, failed: bool) -> None:
        pass

    def turn_ran(self, seconds: float, outcome: TurnOutcome) -> None:
        pass

    def llm_called(
        self, model: str, outcome: LlmOutcome, prompt_tokens: int, completion_tokens: int
    ) -> None:
        pass


NO_METRICS = NoMetrics()
