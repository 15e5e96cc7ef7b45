"""Repeating reminders read as people say them, in English and Russian; a rule the words
do not cover is shown as it is rather than misread."""

from datetime import datetime

import pytest

from bot.i18n import Language, speaking
from bot.reminders.spoken import spoken_rule

ANCHOR = datetime(2026, 3, 2, 8, 0)  # a Monday, 08:00
ZONE = "Europe/Berlin"


def said(rule: str, language: Language) -> str:
    with speaking(language):
        return spoken_rule(rule, ANCHOR, ZONE)


@pytest.mark.parametrize(
    ("rule", "english", "russian"),
    [
        (
            "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0",
            "every Monday at 08:00",
            "по понедельникам в 08:00",
        ),
        (
            "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=30",
            "every weekday at 07:30",
            "по будням в 07:30",
        ),
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU;COUNT=5",
            "every 2 weeks on Sunday at 08:00, 5 times",
            "раз в 2 недели по воскресеньям в 08:00, 5 раз",
        ),
        ("FREQ=DAILY;BYHOUR=8,20", "every day at 08:00 and 20:00", "каждый день в 08:00 и 20:00"),
        ("FREQ=HOURLY;INTERVAL=3", "every 3 hours", "раз в 3 часа"),
        (
            "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;BYMINUTE=0",
            "every month on the last Friday at 17:00",
            "каждый месяц в последнюю пятницу в 17:00",
        ),
        (
            "FREQ=MONTHLY;BYMONTHDAY=22",
            "every month on the 22nd at 08:00",
            "каждый месяц 22-го числа в 08:00",
        ),
        (
            "FREQ=YEARLY;UNTIL=20300101T000000Z",
            "every year on 2 March at 08:00, until 1 January 2030",
            "каждый год 2 марта в 08:00, до 1 января 2030",
        ),
    ],
)
def test_a_rule_reads_as_people_say_it(rule, english, russian):
    assert said(rule, Language.EN) == f"{english}, {ZONE}"
    assert said(rule, Language.RU) == f"{russian}, {ZONE}"


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR",  # the last working day
        "FREQ=DAILY;BYDAY=MO",
        "FREQ=MONTHLY;BYMONTHDAY=1,15",
        "FREQ=HOURLY;BYMINUTE=15",
    ],
)
def test_a_rule_the_words_do_not_cover_is_shown_as_it_is(rule):
    assert said(rule, Language.EN) == f"{rule}, {ZONE}"
