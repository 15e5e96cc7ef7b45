"""Relative days in what a user says, resolved to dates when it is stored."""

from datetime import UTC, datetime

import pytest

from bot.memory.dates import resolve_relative_dates
from bot.memory.episodes import items_from_exchange

MONDAY = datetime(2023, 4, 24, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("had an interview yesterday", "had an interview yesterday (2023-04-23)"),
        ("we got back last night", "we got back last night (2023-04-23)"),
        ("we moved in two days ago", "we moved in two days ago (2023-04-22)"),
        ("the op is next Tuesday", "the op is next Tuesday (2023-04-25)"),
        ("next Monday is the deadline", "next Monday (2023-05-01) is the deadline"),
        ("last Monday was fun", "last Monday (2023-04-17) was fun"),
        ("the day before yesterday I ran", "the day before yesterday (2023-04-22) I ran"),
        ("it starts in 3 weeks from now", "it starts in 3 weeks from now (2023-05-15)"),
        ("вчера был дождь", "вчера (2023-04-23) был дождь"),
        ("yesterday (2023-04-23) I said so", "yesterday (2023-04-23) I said so"),
        ("last week was busy, on Friday too", "last week was busy, on Friday too"),
    ],
)
def test_a_phrase_naming_one_day_is_followed_by_that_day(said, stored):
    assert resolve_relative_dates(said, MONDAY) == stored


def test_an_exchange_keeps_the_date_its_relative_day_meant():
    said = "we adopted a grey rescue cat yesterday, she is called Miso"
    *_, episode = items_from_exchange(said, "Lovely news, congratulations!", "t", MONDAY, None)
    assert "yesterday (2023-04-23)" in episode.content
