"""The one retry policy and the one background back-off (`bot/retry.py`), and the adapters'
policies built from it: what is retried, how long it waits, where it stops."""

import dataclasses
import datetime as dtm
import email.utils
import time

import httpx
import openai
import pytest
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut

from bot.adapters.openai_llm import OPENAI_RETRY
from bot.adapters.telegram.delivery import TELEGRAM_RETRY
from bot.adapters.telegram.flood_control import FloodControl, flood_retry
from bot.rag.long_term import DELETE_RETRY
from bot.rag.model import RagRejected, RagUnavailable
from bot.retry import Backoff, RetryPolicy, retry_after_seconds


def http_error(status: int, **headers: str) -> openai.APIStatusError:
    """What the `openai` SDK raises for an HTTP error answer, headers and all."""
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    error_type = openai.RateLimitError if status == 429 else openai.InternalServerError
    return error_type(f"HTTP {status}", response=response, body=None)


class Waits:
    """Stands in for `asyncio.sleep` in a policy: records each wait, waits none."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


class Failing:
    """A request that raises the given errors in turn, then answers "ok"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def recording(policy: RetryPolicy) -> tuple[RetryPolicy, Waits]:
    waits = Waits()
    return dataclasses.replace(policy, sleep=waits), waits


# -- the one reader of Retry-After ---------------------------------------------------------


def test_reads_telegrams_flood_wait_in_either_form_ptb_keeps():
    assert retry_after_seconds(RetryAfter(7)) == 7.0
    assert retry_after_seconds(RetryAfter(dtm.timedelta(seconds=2.5))) == 2.5


def test_reads_an_http_answers_retry_after_in_seconds_milliseconds_or_a_date():
    assert retry_after_seconds(http_error(429, **{"Retry-After": "7"})) == 7.0
    assert retry_after_seconds(http_error(429, **{"retry-after-ms": "1500"})) == 1.5
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (retry_after_seconds(http_error(503, **{"Retry-After": later})) or 0) <= 30
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert retry_after_seconds(http_error(503, **{"Retry-After": past})) == 0.0


def test_no_hint_or_an_unreadable_one_is_none():
    assert retry_after_seconds(http_error(429)) is None
    assert retry_after_seconds(http_error(429, **{"Retry-After": "soon, maybe"})) is None
    assert retry_after_seconds(NetworkError("connection reset")) is None
    assert retry_after_seconds(ValueError("no response at all")) is None


# -- one policy, Telegram and OpenAI alike --------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "hinted"),
    [
        (OPENAI_RETRY, http_error(429, **{"Retry-After": "7"})),
        (flood_retry(max_wait_seconds=60), RetryAfter(7)),
    ],
    ids=["openai-429", "telegram-flood-wait"],
)
async def test_the_servers_wait_is_waited_exactly_then_the_request_is_tried_again(policy, hinted):
    policy, waits = recording(policy)
    request = Failing(hinted)
    assert await policy.call(request) == "ok"
    assert request.calls == 2
    assert waits.seconds == [7.0]


async def test_without_a_hint_the_wait_doubles_from_the_first_up_to_the_longest():
    policy, waits = recording(TELEGRAM_RETRY.limited(attempts=6))
    request = Failing(*(TimedOut() for _ in range(5)))
    assert await policy.call(request) == "ok"
    assert waits.seconds == [0.5, 1.0, 2.0, 4.0, 8.0]


async def test_jittered_waits_stay_under_the_doubling_ceiling():
    policy, waits = recording(OPENAI_RETRY.limited(attempts=4, max_seconds=60))
    request = Failing(*(http_error(503) for _ in range(3)))
    assert await policy.call(request) == "ok"
    ceilings = [0.5, 1.0, 2.0]
    assert len(waits.seconds) == len(ceilings)
    assert all(0 <= wait <= top for wait, top in zip(waits.seconds, ceilings, strict=True))


@pytest.mark.parametrize(
    ("policy", "final"),
    [
        # A wait past the bound is not waited: the error goes up at once.
        (OPENAI_RETRY.limited(attempts=4, max_seconds=5), http_error(429, **{"Retry-After": "30"})),
        (flood_retry(max_wait_seconds=5), RetryAfter(30)),
        (TELEGRAM_RETRY, BadRequest("Message text is empty")),
        (OPENAI_RETRY.limited(attempts=4, max_seconds=60), http_error(400)),
        (flood_retry(max_wait_seconds=60), NetworkError("reset")),
        (DELETE_RETRY, RagRejected("HTTP 422", http_status=422)),
    ],
    ids=[
        "openai-429-past-the-time-bound",
        "telegram-flood-wait-past-its-bound",
        "telegram-bad-request",
        "openai-400",
        "flood-control-other",
        "rag-rejected",
    ],
)
async def test_what_retrying_cannot_mend_fails_at_the_first_try(policy, final):
    policy, waits = recording(policy)
    request = Failing(final)
    with pytest.raises(type(final)):
        await policy.call(request)
    assert request.calls == 1
    assert waits.seconds == []


async def test_attempts_are_bounded_and_the_last_error_is_raised():
    policy, waits = recording(DELETE_RETRY)
    errors = [RagUnavailable(f"busy {n}") for n in range(1, 7)]
    request = Failing(*errors)
    with pytest.raises(RagUnavailable, match="busy 5"):
        await policy.call(request)
    assert request.calls == DELETE_RETRY.attempts == 5
    assert waits.seconds == [1.0, 2.0, 4.0, 4.0]


async def test_the_time_the_first_try_took_counts_against_the_bound(monkeypatch):
    policy, waits = recording(
        RetryPolicy("[Test]", lambda _: True, attempts=3, max_seconds=10, jitter=False)
    )
    policy = dataclasses.replace(policy, first_wait_seconds=4)
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])

    async def slow_then_failing() -> str:
        clock[0] += 7  # the first try hangs 7 s before it fails: a 4 s wait would end at 11
        raise RagUnavailable("busy")

    with pytest.raises(RagUnavailable):
        await policy.call(slow_then_failing)
    assert waits.seconds == []
    clock[0] = 1000.0
    request = Failing(RagUnavailable("busy"))  # a quick failure is tried again after 4 s
    assert await policy.call(request) == "ok"
    assert waits.seconds == [4.0] and request.calls == 2


async def test_a_retry_is_logged_with_the_services_prefix_and_the_wait(caplog):
    policy, _ = recording(TELEGRAM_RETRY)
    await policy.call(Failing(TimedOut()))
    lines = [record.getMessage() for record in caplog.records]
    assert any(
        line.startswith("[Telegram] attempt 1 failed (") and line.endswith("retrying in 0.5s")
        for line in lines
    )


# -- the one background back-off ------------------------------------------------------------


def test_backoff_doubles_with_each_failure_up_to_its_ceiling():
    backoff = Backoff(first_seconds=5, longest_seconds=600)
    assert [backoff.after(n) for n in range(0, 10)] == [0, 5, 10, 20, 40, 80, 160, 320, 600, 600]
    assert backoff.after(10_000) == 600  # no overflow after a long outage


def test_backoff_jitter_stays_within_its_fraction():
    backoff = Backoff(first_seconds=4, longest_seconds=60, jitter=0.2)
    rests = [backoff.after(2) for _ in range(200)]
    assert all(6.4 <= rest <= 9.6 for rest in rests)
    assert len(set(rests)) > 1


async def test_flood_control_tries_a_flooded_request_again_at_most_max_retries_times():
    limiter = FloodControl(max_retries=2)
    flooded = Failing(*(RetryAfter(dtm.timedelta(milliseconds=10)) for _ in range(5)))
    with pytest.raises(RetryAfter):
        await limiter.process_request(flooded, (), {}, "sendMessage", {"chat_id": 1}, None)
    assert flooded.calls == 3, "the first try and two more"
    answered = Failing(RetryAfter(dtm.timedelta(milliseconds=10)))
    assert await limiter.process_request(answered, (), {}, "sendMessage", {"chat_id": 2}, None)
    assert answered.calls == 2
