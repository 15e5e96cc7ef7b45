from bot.rag.circuit import CircuitBreaker, CircuitState
from tests.fakes.clock import FakeClock


def test_opens_after_threshold_consecutive_failures_and_fails_fast():
    clock = FakeClock()
    breaker = CircuitBreaker(clock)
    for _ in range(2):
        assert breaker.allow(30)
        breaker.record_failure("HTTP 503", 3, 30, severe=False)
    assert breaker.state is CircuitState.CLOSED
    breaker.record_failure("HTTP 503", 3, 30, severe=False)
    assert breaker.state is CircuitState.OPEN
    assert not breaker.allow(30)
    assert breaker.retry_in() == 30


def test_a_success_resets_the_count():
    breaker = CircuitBreaker(FakeClock())
    breaker.record_failure("x", 3, 30, severe=False)
    breaker.record_failure("x", 3, 30, severe=False)
    breaker.record_success()
    breaker.record_failure("x", 3, 30, severe=False)
    assert breaker.state is CircuitState.CLOSED


def test_a_timeout_opens_at_once():
    breaker = CircuitBreaker(FakeClock())
    breaker.record_failure("timed out", 3, 30, severe=True)
    assert breaker.state is CircuitState.OPEN


def test_half_open_lets_one_probe_through_after_the_cooldown():
    clock = FakeClock()
    breaker = CircuitBreaker(clock)
    breaker.record_failure("timed out", 3, 30, severe=True)
    clock.now += 29.9
    assert not breaker.allow(30)
    clock.now += 0.2
    assert breaker.allow(30)
    assert breaker.state is CircuitState.HALF_OPEN
    assert not breaker.allow(30), "only one probe at a time"
    breaker.record_success()
    assert breaker.state is CircuitState.CLOSED and breaker.allow(30)


def test_a_failed_probe_opens_for_another_cooldown():
    clock = FakeClock()
    breaker = CircuitBreaker(clock)
    breaker.record_failure("refused", 1, 30, severe=False)
    clock.now += 31
    assert breaker.allow(30)
    breaker.record_failure("refused", 5, 30, severe=False)
    assert breaker.state is CircuitState.OPEN
    assert not breaker.allow(30)


def test_a_probe_that_never_reports_back_does_not_shut_the_circuit_forever():
    clock = FakeClock()
    breaker = CircuitBreaker(clock)
    breaker.record_failure("timed out", 3, 30, severe=True)
    clock.now += 31
    assert breaker.allow(30)  # the probe, then cancelled: no success or failure recorded
    clock.now += 31
    assert breaker.allow(30)
