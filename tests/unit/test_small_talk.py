"""One definition of what is not worth remembering, for memory and RAG indexing alike."""

import pytest

from bot.conversation import utc_now
from bot.memory.episodes import items_from_exchange
from bot.small_talk import is_small_talk, is_trivial_exchange

ANSWER = "Thanks for telling me, I'll keep that in mind for later."


@pytest.mark.parametrize(
    "said",
    [
        "lol that's hilarious",
        "cheers mate",
        "good night, talk tomorrow",
        "so tired today, barely slept",
        "it's pouring here today",
        "sorry, typo, ignore the last message",
        "let me think about it",
        "why?",
        "same tbh",
        "right, makes sense",
        "I'll think about it",
        "talk later",
        "hiya",
        "спасибо, очень помогло",
        "сегодня весь день льёт дождь",
        "Сегодня весь день льёт дождь",
        "Weather is lovely today, went for a walk at lunch",
        "Finally some sun today",
        "So tired today, barely slept",
        "finished work today, so tired",
        "just finished lunch and now I could really use a nap",
    ],
)
def test_small_talk_is_neither_an_episode_nor_indexed(said):
    assert is_small_talk(said)
    assert is_trivial_exchange(said, ANSWER)
    assert items_from_exchange(said, ANSWER, "s", utc_now(), 90) == []


@pytest.mark.parametrize(
    "said",
    [
        "lol my dog ate my homework",
        "I'm so tired today, my daughter Lena kept me up",
        "thanks! also my wife is allergic to shellfish",
        "hi, how do I add a healthcheck?",
        "today I learned that Postgres has LISTEN/NOTIFY",
        "baking sourdough every sunday lately",
        "honestly can't stand cilantro",
        "oh and I can't have gluten, celiac",
        "I think my sister is moving to Lyon",
        "need to talk to my landlord later about the boiler",
        "Miso had her jabs this morning, she has not forgiven me",
        "Tom made dinner tonight, a rare event",
        "signed off by the physio today, no more exercises except the ones I like",
        "walked to the end of the street and back without the stick this morning",
        "we signed the lease this morning, two bedrooms right next to the park",
    ],
)
def test_chat_that_carries_something_durable_is_kept(said):
    assert not is_small_talk(said)
    assert not is_trivial_exchange(said, ANSWER)


def test_the_spec_filters_stay_the_floor():
    assert is_trivial_exchange("Thank you!", ANSWER)  # the spec's greeting list
    assert is_trivial_exchange("Explain monads", "   ")  # blank answer
    assert is_trivial_exchange("abc", "d" * 46, 50)  # shorter than indexMinLength
    assert not is_trivial_exchange("abc", "d" * 47, 50)
