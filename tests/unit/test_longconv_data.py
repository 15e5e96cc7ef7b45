"""The long-conversation evaluation set keeps its promises: long multi-session conversations,
enough questions of every kind, evidence that exists and was said by the user, splits by
conversation, answers to `when` resolved from the session's date, and a file that is exactly
what its generator writes."""

import json
from collections import Counter
from datetime import date

from bench.longconv_chatter import Pool
from bench.longconv_data import DEFAULT_PATH, KINDS, SPLITS, load_conversations
from bench.longconv_generate import POOLS, generate, resolve
from bench.longconv_scoring import content_words

CONVERSATIONS = load_conversations()


def test_long_conversations_over_many_dated_sessions():
    assert len(CONVERSATIONS) >= 4
    for conversation in CONVERSATIONS:
        assert len(conversation.messages()) >= 300
        assert len(conversation.sessions) >= 10
        starts = [session.started for session in conversation.sessions]
        assert starts == sorted(starts)
        assert (starts[-1] - starts[0]).days >= 180, "a long life, not one afternoon"


def test_at_least_200_questions_of_every_kind():
    kinds = Counter(q.kind for c in CONVERSATIONS for q in c.questions)
    assert sum(kinds.values()) >= 200
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= 30


def test_evidence_is_what_the_user_said_and_multi_needs_several_messages():
    for conversation in CONVERSATIONS:
        said = {message.id for _, message in conversation.messages("user")}
        for question in conversation.questions:
            assert question.evidence and set(question.evidence) <= said, question.id
            assert question.answers, question.id
            if question.kind == "multi":
                assert len(question.evidence) >= 2, question.id


def test_splits_are_by_conversation():
    by_split = {split: load_conversations(split=split) for split in SPLITS}
    assert len(by_split["dev"]) >= 2 and len(by_split["test"]) >= 2
    assert not {c.id for c in by_split["dev"]} & {c.id for c in by_split["test"]}


def test_questions_mostly_paraphrase_their_evidence():
    shared = []
    for conversation in CONVERSATIONS:
        said = {message.id: message.text for _, message in conversation.messages()}
        for question in conversation.questions:
            asked = set(content_words(question.text))
            for evidence in question.evidence:
                shared.append(bool(asked & set(content_words(said[evidence]))))
    assert sum(shared) / len(shared) < 0.5


def test_relative_dates_resolve_from_the_session_date():
    said_on = {"cat": date(2025, 4, 12)}  # a Saturday
    assert resolve("date:cat:-1", said_on) == "2025-04-11|11 April|April 11"
    assert resolve("next:cat:tuesday", said_on) == "2025-04-15|15 April|April 15"
    assert resolve("next:cat:saturday", said_on) == "2025-04-19|19 April|April 19"
    assert resolve("Bedminster", said_on) == "Bedminster"


def test_the_file_is_what_the_generator_writes():
    assert json.loads(DEFAULT_PATH.read_text(encoding="utf-8")) == generate()


def _lines(pool: Pool) -> set[str]:
    said = {line for lines in pool.small_talk.values() for line in lines}
    said |= {line for lines in pool.replies.values() for line in lines}
    said |= {text for pairs in pool.paired.values() for pair in pairs for text in pair}
    return said | {text for pair in pool.advice for text in pair}


def test_test_conversations_draw_small_talk_from_a_pool_dev_never_saw():
    assert set(POOLS) == set(SPLITS)
    dev, test = _lines(POOLS["dev"]), _lines(POOLS["test"])
    assert not dev & test
    for conversation in CONVERSATIONS:
        said = {message.text for _, message in conversation.messages()}
        other = test if conversation.split == "dev" else dev
        assert not said & other, conversation.id
        assert said & _lines(POOLS[conversation.split]), conversation.id
