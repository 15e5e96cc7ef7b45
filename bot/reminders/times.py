"""Time zones, local times given by people or the model, and repeating rules (RFC 5545).

Local times are resolved in the user's time zone and kept as UTC. A repeating reminder is
expanded in local wall time (its rule and `anchor` are local), then each occurrence converted
to UTC, so "every Monday at 8" stays at 8 when the clocks change.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import rrule, rrulestr

from bot.i18n.catalogue import reminders as say
from bot.reminders import texts
from bot.reminders.model import ReminderRefused


class TimeRefused(ReminderRefused):
    """A time, zone or rule that cannot be used; the message says why, for people."""


def zone_named(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise TimeRefused(say.unknown_zone(name)) from None


def resolve_local(value: str, zone: ZoneInfo) -> datetime:
    """`value` (ISO 8601: `2026-05-04 09:00`, or with an offset) as UTC. A time without an
    offset is wall time in `zone`."""
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise TimeRefused(texts.BAD_TIME.format(value=value, zone=zone.key)) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed.astimezone(UTC)


def local_wall_time(moment: datetime, zone: ZoneInfo) -> datetime:
    """`moment` as wall time in `zone`, without zone: what repeating rules are expanded in."""
    return moment.astimezone(zone).replace(tzinfo=None, microsecond=0)


def shown(moment: datetime, zone: ZoneInfo) -> str:
    """A time for people, in their zone and the current language: `Fri 27 Nov 2026 09:00`,
    `пт 27 ноя 2026 09:00`."""
    return say.wall_time_shown(moment.astimezone(zone))


def clean_rule(repeat: str) -> str:
    """The RRULE's own text: one line, no `RRULE:` prefix, upper case; refuses what is not a
    single rule (a DTSTART or a second line would change what was checked)."""
    rule = repeat.strip().upper().removeprefix("RRULE:").strip()
    if not rule or "\n" in rule or ":" in rule or "DTSTART" in rule:
        raise TimeRefused(texts.BAD_REPEAT.format(repeat=repeat, reason="one RRULE line"))
    return rule


def parse_rule(rule: str, anchor: datetime) -> rrule:
    """The rule expanded from `anchor` (local wall time). Only for rules already checked by
    `bot/reminders/rule_check.py`: an impossible one would be searched to the year 9999."""
    try:
        parsed = rrulestr(rule, dtstart=anchor)
    except (ValueError, TypeError) as exc:
        raise TimeRefused(texts.BAD_REPEAT.format(repeat=rule, reason=exc)) from None
    if not isinstance(parsed, rrule):
        raise TimeRefused(texts.BAD_REPEAT.format(repeat=rule, reason="one RRULE line"))
    return parsed


def next_occurrence(
    rule: str, anchor: datetime, zone: ZoneInfo, after: datetime
) -> datetime | None:
    """The rule's first occurrence strictly after `after` (UTC), as local wall time (what
    `re_anchored` takes); None when it has ended (COUNT, UNTIL)."""
    return parse_rule(rule, anchor).after(local_wall_time(after, zone))


def utc_of(local: datetime, zone: ZoneInfo) -> datetime:
    """A rule's occurrence (local wall time in `zone`) as UTC."""
    return local.replace(tzinfo=zone).astimezone(UTC)


def re_anchored(rule: str, anchor: datetime, occurrence: datetime) -> datetime:
    """The anchor to keep once `occurrence` (local wall time, one of the rule's own) is known.

    python-dateutil walks from the anchor to every time it is asked for, so a rule anchored
    years ago cost a walk through every occurrence since at each delivery. Expanded from one
    of its own occurrences, a rule gives the same times after it (the interval's phase and
    the fields defaulted from the anchor all match there), so that occurrence becomes the
    anchor; not for a COUNT, which counts from the first."""
    if any(part.startswith("COUNT=") for part in rule.split(";")):
        return anchor
    return occurrence


def gaps(occurrences: list[datetime]) -> list[timedelta]:
    return [later - earlier for earlier, later in pairwise(occurrences)]
