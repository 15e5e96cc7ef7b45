"""The allowlist, the stranger's once-per-cooldown refusal, and the per-user rate limit."""

from bot.adapters.telegram.access import MAX_TRACKED_USERS, AccessGate, Verdict
from bot.config import RuntimeConfig
from tests.fakes.clock import FakeClock

OWNER = 42


def config(allowed=(OWNER,), per_minute=3) -> RuntimeConfig:
    return RuntimeConfig.model_validate(
        {
            "telegram": {"allowedUsers": list(allowed)},
            "rateLimit": {"messagesPerMinute": per_minute},
        }
    )


def gate(clock: FakeClock | None = None, cooldown: float = 300.0) -> AccessGate:
    clock = clock or FakeClock()
    return AccessGate(cooldown, clock=clock, wall_clock=clock)


def test_empty_allowlist_lets_nobody_in():
    assert gate().admit(OWNER, 0.0, config(allowed=())).verdict is Verdict.REFUSE


def test_stranger_is_told_once_per_cooldown():
    clock = FakeClock()
    access = gate(clock, cooldown=300)
    verdicts = [access.admit(7, clock.now, config()).verdict for _ in range(3)]
    assert verdicts == [Verdict.REFUSE, Verdict.REFUSE_QUIETLY, Verdict.REFUSE_QUIETLY]
    clock.now += 301
    assert access.admit(7, clock.now, config()).verdict is Verdict.REFUSE


def test_allowlist_is_read_from_the_config_of_each_message():
    access = gate()
    assert access.admit(7, 0.0, config()).verdict is Verdict.REFUSE
    assert access.admit(7, 0.0, config(allowed=(OWNER, 7))).verdict is Verdict.ALLOW
    assert access.admit(7, 0.0, config()).verdict is Verdict.REFUSE_QUIETLY


def test_rate_limit_says_when_to_try_again_then_stays_quiet_until_then():
    clock = FakeClock()
    access = gate(clock)
    sent = clock.now
    verdicts = [access.admit(OWNER, sent + i, config(per_minute=3)) for i in range(5)]
    assert [v.verdict for v in verdicts] == [
        Verdict.ALLOW,
        Verdict.ALLOW,
        Verdict.ALLOW,
        Verdict.SLOW_DOWN,
        Verdict.SLOW_DOWN_QUIETLY,
    ]
    notice = verdicts[3]
    assert notice.limit_per_minute == 3
    assert notice.retry_in_seconds == 60, "the first message leaves the window at +60 s"


def test_rate_limit_window_slides_by_send_time():
    access = gate()
    limits = config(per_minute=2)
    assert access.admit(OWNER, 0.0, limits).verdict is Verdict.ALLOW
    assert access.admit(OWNER, 30.0, limits).verdict is Verdict.ALLOW
    assert access.admit(OWNER, 59.0, limits).verdict is Verdict.SLOW_DOWN
    assert access.admit(OWNER, 60.5, limits).verdict is Verdict.ALLOW, "the first one left"
    assert access.admit(OWNER, 61.0, limits).verdict is Verdict.SLOW_DOWN, "told anew"


def test_rate_limit_change_applies_to_the_next_message():
    access = gate()
    for i in range(3):
        access.admit(OWNER, float(i), config(per_minute=3))
    assert access.admit(OWNER, 4.0, config(per_minute=3)).verdict is Verdict.SLOW_DOWN
    assert access.admit(OWNER, 5.0, config(per_minute=10)).verdict is Verdict.ALLOW


def test_users_are_limited_apart():
    access = gate()
    both = config(allowed=(OWNER, 7), per_minute=1)
    assert access.admit(OWNER, 0.0, both).verdict is Verdict.ALLOW
    assert access.admit(7, 0.0, both).verdict is Verdict.ALLOW
    assert access.admit(OWNER, 1.0, both).verdict is Verdict.SLOW_DOWN


def test_a_flood_of_strangers_cannot_grow_memory_without_bound():
    access = gate()
    for stranger in range(MAX_TRACKED_USERS + 500):
        access.admit(10_000 + stranger, 0.0, config())
    assert len(access._refused_at) == MAX_TRACKED_USERS
