"""Relative times in what a user says, resolved to dates when it is stored.

"We adopted a cat yesterday", recalled months later, no longer says when; stored as "We
adopted a cat yesterday (2025-04-11)" it does, and a model can reason with it. Only phrases
that name one day are resolved ("yesterday", "two days ago", "next Tuesday", "last night");
"last week" or "in the spring" are left as they are, and words already followed by a date
are not touched again.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_COUNT = r"(?P<count>\d{1,2}|" + "|".join(NUMBERS) + ")"
_WEEKDAY = "(?P<weekday>" + "|".join(WEEKDAYS) + ")"
_DAYS_AWAY = {
    "the day before yesterday": -2,
    "the day after tomorrow": 2,
    "yesterday": -1,
    "last night": -1,
    "tomorrow": 1,
    "вчера": -1,
    "позавчера": -2,
    "завтра": 1,
    "послезавтра": 2,
}
_PHRASE = re.compile(
    r"\b(?:"
    + "|".join(re.escape(phrase) for phrase in sorted(_DAYS_AWAY, key=len, reverse=True))
    + rf"|{_COUNT} (?P<unit>days?|weeks?) (?P<way>ago|from now)"
    + rf"|(?P<which>next|last|this) {_WEEKDAY}"
    + r")\b(?! \(\d{4}-\d{2}-\d{2}\))",
    re.IGNORECASE,
)


def resolve_relative_dates(text: str, said_at: datetime) -> str:
    """`text` with each phrase naming one day followed by that day: "yesterday (2025-04-11)"."""
    today = said_at.date()

    def dated(match: re.Match[str]) -> str:
        return f"{match.group(0)} ({_day_of(match, today):%Y-%m-%d})"

    return _PHRASE.sub(dated, text)


def _day_of(match: re.Match[str], today: date) -> date:
    phrase = match.group(0).lower()
    if phrase in _DAYS_AWAY:
        return today + timedelta(days=_DAYS_AWAY[phrase])
    if match.group("unit"):
        count = match.group("count").lower()
        days = int(count) if count.isdigit() else NUMBERS[count]
        days *= 7 if match.group("unit").lower().startswith("week") else 1
        return today + timedelta(days=days if match.group("way").lower() == "from now" else -days)
    weekday = WEEKDAYS.index(match.group("weekday").lower())
    return _weekday(match.group("which").lower(), weekday, today)


def _weekday(which: str, weekday: int, today: date) -> date:
    """ "next Tuesday" and "this Tuesday": the coming one ("next" on a Tuesday: a week on);
    "last Tuesday": the one before today. ("On Tuesday" may be either, and is left alone.)"""
    if which == "last":
        return today - timedelta(days=(today.weekday() - weekday) % 7 or 7)
    ahead = (weekday - today.weekday()) % 7
    return today + timedelta(days=ahead or (7 if which == "next" else 0))
