"""Prometheus metrics of one bot process (`prometheus-client`), in a registry of its own.

What is measured and where it comes from:

- turns and their time, each pipeline system's time and failures: `Pipeline` reports them
  (`PipelineObserver`);
- LLM calls and tokens by model: `MeteredLlm` reports them (`LlmCallObserver`);
- request retries by service: read from `bot/retry.py` when scraped;
- queue depths, the RAG circuit's state, the disk's state: read when scraped, from the
  callables `BotApp.build` hands to `watch` and `watch_state`;
- errors by kind: every log record at WARNING or above, by its component prefix (`[RAG] ...`).

Labels name systems, models, services and components, never a user, a chat or message text;
label values that come from configuration or log prefixes are capped in number, so nothing a
user sends can grow the output.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bot.ports.metrics import LlmOutcome, TurnOutcome
from bot.retry import retries_so_far

TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
"""Seconds: a turn is an LLM answer (a second to a minute), tools included."""
SYSTEM_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120)
"""Seconds: most systems take milliseconds, the tool loop as long as the LLM."""
MAX_LABEL_VALUES = 32
"""Distinct models or error kinds kept as labels; the rest count as `other`."""
OTHER = "other"
_KIND = re.compile(r"^\[([A-Za-z]{2,20})\]")


class _BoundedLabels:
    """Label values as given while there are few, `other` beyond `limit`."""

    def __init__(self, limit: int = MAX_LABEL_VALUES) -> None:
        self._limit = limit
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, value: str) -> str:
        with self._lock:
            if value in self._seen:
                return value
            if len(self._seen) >= self._limit:
                return OTHER
            self._seen.add(value)
            return value


class PrometheusMetrics:
    """`PipelineObserver` and `LlmCallObserver` for Prometheus, plus what is read at scrape."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self._turns = Counter("bot_turns", "Turns run, by outcome.", ["outcome"], registry=r)
        self._turn_seconds = Histogram(
            "bot_turn_seconds", "Time of a turn's pipeline.", buckets=TURN_BUCKETS, registry=r
        )
        self._system_seconds = Histogram(
            "bot_system_seconds",
            "Time of each pipeline system that ran, by system name.",
            ["system"],
            buckets=SYSTEM_BUCKETS,
            registry=r,
        )
        self._system_failures = Counter(
            "bot_system_failures", "Pipeline systems that raised, by name.", ["system"], registry=r
        )
        self._llm_calls = Counter(
            "bot_llm_calls", "LLM calls by model and outcome.", ["model", "outcome"], registry=r
        )
        self._llm_tokens = Counter(
            "bot_llm_tokens",
            "LLM tokens by model and kind (prompt, completion).",
            ["model", "kind"],
            registry=r,
        )
        self._errors = Counter(
            "bot_errors",
            "Log records at WARNING or above, by component (kind) and level.",
            ["kind", "level"],
            registry=r,
        )
        self._models = _BoundedLabels()
        self._kinds = _BoundedLabels()
        self._scraped = _ScrapeTimeValues()
        r.register(self._scraped)

    # -- PipelineObserver ---------------------------------------------------------------------
    def system_ran(self, system: str, seconds: float, failed: bool) -> None:
        self._system_seconds.labels(system).observe(seconds)
        if failed:
            self._system_failures.labels(system).inc()

    def turn_ran(self, seconds: float, outcome: TurnOutcome) -> None:
        self._turns.labels(outcome.value).inc()
        self._turn_seconds.observe(seconds)

    # -- LlmCallObserver ----------------------------------------------------------------------
    def llm_called(
        self, model: str, outcome: LlmOutcome, prompt_tokens: int, completion_tokens: int
    ) -> None:
        model = self._models(model)
        self._llm_calls.labels(model, outcome.value).inc()
        if prompt_tokens:
            self._llm_tokens.labels(model, "prompt").inc(prompt_tokens)
        if completion_tokens:
            self._llm_tokens.labels(model, "completion").inc(completion_tokens)

    # -- read at scrape time ------------------------------------------------------------------
    def watch(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        """A gauge whose value is `read()` when scraped (a queue's depth)."""
        self._scraped.gauges.append((name, documentation, read))

    def watch_state(
        self, name: str, documentation: str, states: Iterable[str], read: Callable[[], str]
    ) -> None:
        """A gauge per state, 1 for the one `read()` names and 0 for the others (a circuit)."""
        self._scraped.states.append((name, documentation, tuple(states), read))

    # -- errors by kind -----------------------------------------------------------------------
    def error_counter(self) -> logging.Handler:
        """A logging handler counting records at WARNING and above by component: add it to
        the root logger while the app runs."""
        return _ErrorCounter(self)

    def count_error(self, record: logging.LogRecord) -> None:
        template = record.msg if isinstance(record.msg, str) else ""
        found = _KIND.match(template)
        kind = self._kinds(found.group(1).lower()) if found else OTHER
        self._errors.labels(kind, record.levelname.lower()).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _ScrapeTimeValues(Collector):
    """Gauges read when scraped, and the retry counts of `bot/retry.py`."""

    def __init__(self) -> None:
        self.gauges: list[tuple[str, str, Callable[[], float]]] = []
        self.states: list[tuple[str, str, tuple[str, ...], Callable[[], str]]] = []

    def collect(self) -> Iterable[Metric]:
        retries = CounterMetricFamily(
            "bot_retries", "Request retries, by service (bot/retry.py).", labels=["service"]
        )
        for service, count in sorted(retries_so_far().items()):
            retries.add_metric([service], count)
        yield retries
        for name, documentation, read in self.gauges:
            yield GaugeMetricFamily(name, documentation, value=read())
        for name, documentation, states, read_state in self.states:
            family = GaugeMetricFamily(name, documentation, labels=["state"])
            current = read_state()
            for state in states:
                family.add_metric([state], 1.0 if state == current else 0.0)
            yield family


class _ErrorCounter(logging.Handler):
    def __init__(self, metrics: PrometheusMetrics) -> None:
        super().__init__(logging.WARNING)
        self._metrics = metrics

    def emit(self, record: logging.LogRecord) -> None:
        self._metrics.count_error(record)
