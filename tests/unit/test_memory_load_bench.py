"""The memory-load benchmark fills memory with distinct items, sends each user their own slice
of real messages, never the same text twice, and answers in text both bots show alike."""

from bench.memory_load import (
    PER_CHAT,
    Load,
    RealAnswers,
    memory_items,
    numbered,
    plain,
    sent_messages,
)
from bot.memory.model import ItemType
from bot.small_talk import is_small_talk, is_trivial_exchange

PAIRS = [
    ("my sister Olga lives in Porto", "Porto is lovely."),
    ("hey it's me again", "Hi!"),
    ("the bus to work was 25 minutes late again", "That sounds **tiring**."),
    ("hey it's me again", "Welcome back!"),
]


def test_numbered_texts_never_repeat_and_keep_their_index():
    chosen = numbered(["a", "b", "a"], 7, lambda k: f"+{k}")

    assert chosen == [
        (0, "a"),
        (1, "b"),
        (2, "a+1"),
        (0, "a+2"),
        (1, "b+1"),
        (2, "a+3"),
        (0, "a+4"),
    ]


def test_memory_items_are_distinct_episodes_dated_oldest_first():
    items = memory_items(PAIRS, 9)

    assert [at for _, at in items] == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert {item.type for item, _ in items} == {ItemType.EXCHANGE}
    assert len({item.fingerprint for item, _ in items}) == 9
    dates = [item.created_at for item, _ in items]
    assert dates == sorted(dates)


def test_sent_messages_are_answered_with_their_own_pairs_answer_in_plain_text():
    answers = RealAnswers(sent_messages(PAIRS, 6))

    assert answers.answer("hey it's me again\u200b") == "Welcome back!"
    assert answers.answer("the bus to work was 25 minutes late again") == "That sounds tiring."
    assert answers.answer("unknown") == "echo: unknown"


def test_each_user_sends_their_own_next_messages_after_the_warm_up():
    messages = [f"message {n}" for n in range(2 + 2 * 2 * PER_CHAT)]
    load = Load(messages, RealAnswers([]), "http://127.0.0.1:1", rounds=2)

    assert load.warm_up([1, 2]) == {1: ["message 0"], 2: ["message 1"]}
    first, second = load.burst([1, 2], 0), load.burst([1, 2], 1)
    assert first[1] == messages[2 : 2 + PER_CHAT]
    assert first[2] == messages[2 + PER_CHAT : 2 + 2 * PER_CHAT]
    assert second[2][-1] == messages[-1]


def test_a_repeated_message_stays_small_talk_or_not_as_it_was():
    sent = [said for said, _ in sent_messages(PAIRS, 8)]

    assert len(set(sent)) == 8
    for said in sent:
        original = said.rstrip("\u200b")
        assert is_small_talk(said) == is_small_talk(original)
        assert is_trivial_exchange(said, "Hi!") == is_trivial_exchange(original, "Hi!")


def test_answers_lose_the_markdown_our_bot_would_render():
    assert plain("Try:\n\n- **Tiny** steps\n- *Timebox* it") == "Try:\n\n• Tiny steps\n• Timebox it"
