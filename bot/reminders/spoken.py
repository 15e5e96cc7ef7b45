"""A repeating reminder's RRULE as people say it: "every Monday at 08:00, Europe/Berlin",
«по понедельникам в 08:00, Europe/Berlin», in the reader's language (`bot/i18n/`).

Covers what people ask for: every N minutes, hours, days, weeks (on given weekdays), months
(on a day, or the first or last weekday), years (on a date), with their times, a count or an
end date. A rule with anything else (BYSETPOS, week numbers, several month days) is shown as
its RRULE: better the rule itself than words that say something else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from bot.i18n import Language, current_language
from bot.i18n.phrase import plural_en, plural_ru

DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
ALWAYS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYSECOND"}
CLOCK = {"BYHOUR", "BYMINUTE"}
SAID = {
    "MINUTELY": ALWAYS,
    "HOURLY": ALWAYS,
    "DAILY": ALWAYS | CLOCK,
    "WEEKLY": ALWAYS | CLOCK | {"BYDAY"},
    "MONTHLY": ALWAYS | CLOCK | {"BYDAY", "BYMONTHDAY"},
    "YEARLY": ALWAYS | CLOCK | {"BYMONTH", "BYMONTHDAY"},
}
"""The parts of each kind of rule these words say; any other part makes the rule shown."""

DAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS_EN = (
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
)
ORDINALS_EN = {1: "first", 2: "second", 3: "third", 4: "fourth", -1: "last"}

DAYS_RU_DATIVE = (
    *("понедельникам", "вторникам", "средам", "четвергам", "пятницам", "субботам"),
    "воскресеньям",
)
DAYS_RU_ACCUSATIVE = (
    *("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье"),
)
GENDER_RU = ("m", "m", "f", "m", "f", "f", "n")
ORDINALS_RU = {
    1: {"m": "первый", "f": "первую", "n": "первое"},
    2: {"m": "второй", "f": "вторую", "n": "второе"},
    3: {"m": "третий", "f": "третью", "n": "третье"},
    4: {"m": "четвёртый", "f": "четвёртую", "n": "четвёртое"},
    -1: {"m": "последний", "f": "последнюю", "n": "последнее"},
}
MONTHS_RU_GENITIVE = (
    *("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа"),
    *("сентября", "октября", "ноября", "декабря"),
)


class Unspeakable(Exception):
    """A part of the rule these words do not cover."""


@dataclass
class _Rule:
    freq: str
    interval: int = 1
    days: list[tuple[int, int]] = field(default_factory=list)
    """(ordinal, weekday 0-6): ordinal 0 for every such day, 1 for the first, -1 the last."""
    month_day: int | None = None
    month: int | None = None
    times: list[tuple[int, int]] = field(default_factory=list)
    count: int | None = None
    until: datetime | None = None


def spoken_rule(rule: str, anchor: datetime | None, zone: str) -> str:
    """`rule` (a checked RRULE) in words of the current language, with its time zone;
    the rule itself when it says more than the words cover. `anchor`: its first time,
    local (what the rule takes its day and time from when it names none)."""
    try:
        parsed = _parse(rule, anchor or datetime(2000, 1, 3))
        words = _russian(parsed) if current_language() is Language.RU else _english(parsed)
    except (Unspeakable, ValueError, IndexError, KeyError):
        words = rule
    return f"{words}, {zone}"


def _parse(rule: str, anchor: datetime) -> _Rule:
    fields = dict(part.split("=", 1) for part in rule.split(";") if part)
    said = SAID[fields["FREQ"]]
    if not set(fields) <= said or fields.get("BYSECOND", "0") != "0":
        raise Unspeakable(rule)
    if "BYDAY" in fields and "BYMONTHDAY" in fields:
        raise Unspeakable(rule)
    parsed = _Rule(fields["FREQ"], int(fields.get("INTERVAL", "1")))
    for day in filter(None, fields.get("BYDAY", "").split(",")):
        ordinal = int(day[:-2] or 0)
        if ordinal not in (0, *ORDINALS_EN) or (ordinal and parsed.freq != "MONTHLY"):
            raise Unspeakable(day)
        parsed.days.append((ordinal, DAYS.index(day[-2:])))
    if "BYMONTHDAY" in fields:
        parsed.month_day = int(fields["BYMONTHDAY"])  # several days: ValueError
        if parsed.month_day < -1:
            raise Unspeakable(rule)
    if "BYMONTH" in fields:
        parsed.month = int(fields["BYMONTH"])
    hours = [int(h) for h in fields.get("BYHOUR", str(anchor.hour)).split(",")]
    minutes = [int(m) for m in fields.get("BYMINUTE", str(anchor.minute)).split(",")]
    parsed.times = sorted((h, m) for h in hours for m in minutes)
    if "COUNT" in fields:
        parsed.count = int(fields["COUNT"])
    if "UNTIL" in fields:
        parsed.until = datetime.strptime(fields["UNTIL"][:8], "%Y%m%d")
    _fill_from_anchor(parsed, anchor)
    return parsed


def _fill_from_anchor(rule: _Rule, anchor: datetime) -> None:
    """What the rule leaves to its start, as python-dateutil takes it from DTSTART."""
    if rule.freq == "WEEKLY" and not rule.days:
        rule.days = [(0, anchor.weekday())]
    if rule.freq in ("MONTHLY", "YEARLY") and not rule.days and rule.month_day is None:
        rule.month_day = anchor.day
    if rule.freq == "YEARLY" and rule.month is None:
        rule.month = anchor.month


def _clock(times: list[tuple[int, int]], joiner: str) -> str:
    shown = [f"{h:02d}:{m:02d}" for h, m in times]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} {joiner} {shown[-1]}"


def _listed(items: list[str], joiner: str) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {joiner} {items[-1]}"


# -- English ---------------------------------------------------------------------------------
def _english(rule: _Rule) -> str:
    every = _english_every(rule)
    if rule.freq not in ("MINUTELY", "HOURLY"):
        every += f" at {_clock(rule.times, 'and')}"
    if rule.count is not None:
        every += f", {plural_en(rule.count, 'time', 'times')}"
    if rule.until is not None:
        every += f", until {rule.until.day} {MONTHS_EN[rule.until.month - 1]} {rule.until.year}"
    return every


def _english_every(rule: _Rule) -> str:
    n = rule.interval
    unit = {"MINUTELY": "minute", "HOURLY": "hour", "DAILY": "day", "WEEKLY": "week"}
    unit |= {"MONTHLY": "month", "YEARLY": "year"}
    period = f"every {unit[rule.freq]}" if n == 1 else f"every {n} {unit[rule.freq]}s"
    if rule.freq == "WEEKLY":
        weekdays = sorted(day for _, day in rule.days)
        if weekdays == [0, 1, 2, 3, 4]:
            named = "weekday"
        else:
            named = _listed([DAYS_EN[day] for day in weekdays], "and")
        return f"every {named}" if n == 1 else f"{period} on {named}"
    if rule.freq == "MONTHLY":
        return f"{period} on the {_english_month_day(rule)}"
    if rule.freq == "YEARLY":
        assert rule.month is not None and rule.month_day is not None
        return f"{period} on {rule.month_day} {MONTHS_EN[rule.month - 1]}"
    return period


def _english_month_day(rule: _Rule) -> str:
    if rule.days:
        return _listed([f"{ORDINALS_EN[o]} {DAYS_EN[d]}" for o, d in rule.days], "and")
    assert rule.month_day is not None
    if rule.month_day == -1:
        return "last day"
    day = rule.month_day
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


# -- Russian ---------------------------------------------------------------------------------
def _russian(rule: _Rule) -> str:
    every = _russian_every(rule)
    if rule.freq not in ("MINUTELY", "HOURLY"):
        every += f" в {_clock(rule.times, 'и')}"
    if rule.count is not None:
        every += f", {plural_ru(rule.count, 'раз', 'раза', 'раз')}"
    if rule.until is not None:
        until = rule.until
        every += f", до {until.day} {MONTHS_RU_GENITIVE[until.month - 1]} {until.year}"
    return every


def _russian_every(rule: _Rule) -> str:
    n = rule.interval
    forms = {
        "MINUTELY": ("минуту", "минуты", "минут"),
        "HOURLY": ("час", "часа", "часов"),
        "DAILY": ("день", "дня", "дней"),
        "WEEKLY": ("неделю", "недели", "недель"),
        "MONTHLY": ("месяц", "месяца", "месяцев"),
        "YEARLY": ("год", "года", "лет"),
    }[rule.freq]
    period = f"раз в {plural_ru(n, *forms)}" if n > 1 else _russian_each(rule.freq)
    if rule.freq == "WEEKLY":
        weekdays = sorted(day for _, day in rule.days)
        named = "будням" if weekdays == [0, 1, 2, 3, 4] else None
        named = named or _listed([DAYS_RU_DATIVE[day] for day in weekdays], "и")
        return f"по {named}" if n == 1 else f"{period} по {named}"
    if rule.freq == "MONTHLY":
        return f"{period} {_russian_month_day(rule)}"
    if rule.freq == "YEARLY":
        assert rule.month is not None and rule.month_day is not None
        return f"{period} {rule.month_day} {MONTHS_RU_GENITIVE[rule.month - 1]}"
    return period


def _russian_each(freq: str) -> str:
    return {
        "MINUTELY": "каждую минуту",
        "HOURLY": "каждый час",
        "DAILY": "каждый день",
        "WEEKLY": "каждую неделю",
        "MONTHLY": "каждый месяц",
        "YEARLY": "каждый год",
    }[freq]


def _russian_month_day(rule: _Rule) -> str:
    if rule.days:
        named = [f"{ORDINALS_RU[o][GENDER_RU[d]]} {DAYS_RU_ACCUSATIVE[d]}" for o, d in rule.days]
        return "в " + _listed(named, "и")
    if rule.month_day == -1:
        return "в последний день"
    return f"{rule.month_day}-го числа"
