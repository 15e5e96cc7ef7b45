import re
from datetime import UTC, datetime

import pytest

from bot.rag.documents import exchange_document, file_source_for, format_exchange, owner_tag_of, tag
from bot.small_talk import is_trivial_exchange

AT = datetime(2026, 2, 7, 14, 30, 5, tzinfo=UTC)
LONG_ANSWER = "Here is a docker-compose.yml with a healthcheck on the web service."


def test_document_format_matches_the_spec():
    text = format_exchange("Deploy with compose", "Here's a compose file", AT, "devops")
    assert text == (
        "Date: 2026-02-07 14:30\nSkill: devops\nUser: Deploy with compose\n"
        "Assistant: Here's a compose file"
    )
    assert "Skill:" not in format_exchange("a", "b", AT, None)


@pytest.mark.parametrize(
    "greeting",
    [
        "hi",
        "Hello!",
        "HEY",
        "bye.",
        "thanks!!",
        "Thank you",
        "ok",
        "Okay?",
        "yes",
        "no",
        "Привет!",
        "пока",
        "Спасибо...",
        "да",
        "нет",
        "  hi  ",
    ],
)
def test_greetings_are_trivial_even_with_a_long_answer(greeting):
    assert is_trivial_exchange(greeting, LONG_ANSWER, 50)


def test_short_exchanges_are_trivial_and_the_boundary_is_exact():
    assert is_trivial_exchange("abc", "d" * 46, 50)  # 49 chars
    assert not is_trivial_exchange("abc", "d" * 47, 50)  # 50 chars


def test_blank_answers_are_trivial():
    for answer in (None, "", "   \n"):
        assert is_trivial_exchange("How do I configure Redis persistence?", answer, 0)


def test_a_real_exchange_is_not_trivial():
    assert not is_trivial_exchange("hi, how do I add a healthcheck?", LONG_ANSWER, 50)


def test_file_sources_keep_the_spec_form_and_are_unique():
    names = {file_source_for(AT, "42", "telegram:-100:7") for _ in range(2000)}
    assert len(names) == 2000
    for name in list(names)[:20]:
        assert re.fullmatch(r"conv_20260207_143005_u42_ch[0-9a-f]{16}_[0-9a-f]{10}\.txt", name)


def test_owner_tag_is_read_back_only_from_names_the_bot_made():
    source = file_source_for(AT, "42", "terminal:local")
    assert owner_tag_of(source) == "42"
    assert owner_tag_of(f"/some/dir/{source}") == "42"
    assert owner_tag_of("conv_20260207_143000.txt") is None
    assert owner_tag_of("notes.txt") is None


def test_tags_of_different_values_never_collide():
    assert tag("local") == "local"
    assert tag("12345") == "12345"
    odd = [tag(v) for v in ("a:b", "a_b", "a-b", "-100", "ä")]
    assert len(set(odd)) == 5 and all(t.isalnum() for t in odd)


def test_an_exchange_document_names_owner_and_chat():
    doc = exchange_document("7", "telegram:7", "What port?", "Port 6380.", AT)
    assert owner_tag_of(doc.file_source) == "7"
    assert doc.text.startswith("Date: 2026-02-07 14:30\nUser: What port?")
