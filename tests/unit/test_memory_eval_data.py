"""The memory evaluation set keeps its promises: balanced splits, distinctive answers,
paraphrases that share no token with their statements, enough Russian and small talk."""

import re
from collections import Counter

import pytest

from bench.memory_eval_data import SPLITS, load_eval_set
from bot.memory.text import tokens

EVAL = load_eval_set()
CATEGORIES = {
    "people",
    "pets",
    "preferences",
    "health",
    "work",
    "dates",
    "places",
    "tech",
    "hobbies",
    "home",
}
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def test_enough_facts_split_in_half():
    assert len(EVAL.facts) >= 72
    assert len(EVAL.split("dev")) == len(EVAL.split("test")) == len(EVAL.facts) // 2
    assert {fact.split for fact in EVAL.facts} == set(SPLITS)


def test_every_category_appears_in_both_splits():
    assert {fact.category for fact in EVAL.facts} == CATEGORIES
    for name in SPLITS:
        assert {fact.category for fact in EVAL.split(name)} == CATEGORIES


def test_ids_are_unique():
    counts = Counter(fact.id for fact in EVAL.facts)
    assert [fact_id for fact_id, n in counts.items() if n > 1] == []


def test_some_facts_are_in_russian():
    russian = [fact for fact in EVAL.facts if _CYRILLIC.search(fact.statement)]
    assert len(russian) >= 5
    for fact in russian:
        assert _CYRILLIC.search(fact.natural) and _CYRILLIC.search(fact.paraphrase), fact.id


def test_statements_are_chat_sized():
    for fact in EVAL.facts:
        assert 4 <= len(fact.statement.split()) <= 25, fact.id


@pytest.mark.parametrize("fact", EVAL.facts, ids=lambda fact: fact.id)
def test_expected_names_this_fact_only(fact):
    assert fact.expected in fact.statement
    needle = fact.expected.lower()
    others = [
        other.id for other in EVAL.facts if other is not fact and needle in other.statement.lower()
    ]
    assert others == []
    assert [line for line in EVAL.small_talk if needle in line.lower()] == []
    assert needle not in fact.natural.lower()
    assert needle not in fact.paraphrase.lower()


@pytest.mark.parametrize("fact", EVAL.facts, ids=lambda fact: fact.id)
def test_paraphrase_shares_no_token_with_statement(fact):
    assert tokens(fact.paraphrase)
    assert set(tokens(fact.paraphrase)) & set(tokens(fact.statement)) == set()


def test_small_talk_is_plentiful_and_not_only_short():
    assert len(EVAL.small_talk) >= 30
    assert len(set(EVAL.small_talk)) == len(EVAL.small_talk)
    assert sum(8 <= len(line.split()) <= 15 for line in EVAL.small_talk) >= 5
    assert any(_CYRILLIC.search(line) for line in EVAL.small_talk)


def test_unknown_split_is_refused():
    with pytest.raises(ValueError, match="unknown split"):
        EVAL.split("train")
