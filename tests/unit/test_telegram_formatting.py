"""Markdown to Telegram text + entities, and splitting, on inputs that break other bots."""

import re

import pytest
from telegramify_markdown import MessageEntity

from bot.adapters.telegram.formatting import (
    plain_parts,
    render_markdown,
    without_formatting,
)
from bot.adapters.telegram.splitting import TELEGRAM_TEXT_LIMIT, MessagePart, split_message
from bot.i18n.catalogue.memory import forget_usage
from bot.i18n.catalogue.telegram import empty_reply
from tests.fakes.telegram_server import entity_problem, utf16_len


def assert_sendable(parts: list[MessagePart], limit: int = TELEGRAM_TEXT_LIMIT) -> None:
    """What Telegram checks: non-blank, within the limit, entities inside, valid UTF-16."""
    assert parts, "a reply always has at least one part"
    for part in parts:
        assert part.text.strip(), "Telegram refuses a blank message"
        assert utf16_len(part.text) <= limit
        part.text.encode("utf-16-le")  # raises on a lone surrogate: an emoji cut in half
        entities = [e.to_dict() for e in part.entities]
        assert entity_problem(part.text, entities) is None


def visible(text: str) -> str:
    return re.sub(r"\s+", "", text)


def entity_text(part: MessagePart, entity: MessageEntity) -> str:
    encoded = part.text.encode("utf-16-le")
    return encoded[2 * entity.offset : 2 * (entity.offset + entity.length)].decode("utf-16-le")


@pytest.mark.parametrize(
    "markdown",
    [
        "unbalanced *star and _underscore and `backtick",
        "**bold never closed and _italic never closed",
        "```python\nprint('never closed fence')\n",
        "a * b * c = d_e_f `x` ``` y",
        "[link with no target] and [another](",
        "<b>html</b> <i>tags</i> & entities &amp; < >",
        "\\*escaped\\* \\_chars\\_ \\`ticks\\`",
        "||spoiler without end",
        "> quote\n>> nested quote\n- list\n  - nested\n1. one",
        "| table | without | end",
        "$$ unclosed math and \\( latex",
        "\x00\x01 control characters \x7f",
    ],
)
def test_broken_markdown_never_breaks_the_reply(markdown):
    parts = render_markdown(markdown)
    assert_sendable(parts)
    shown = "".join(p.text for p in parts)
    for word in ("unbalanced", "never", "closed", "quote", "table", "control"):
        if word in markdown:
            assert word in shown, "text is never dropped by the renderer"


def test_markdown_becomes_entities_at_the_right_utf16_offsets():
    parts = render_markdown("😀 **bold** then `code` and שלום **עולם**, then [link](https://x.org)")
    assert len(parts) == 1
    part = parts[0]
    found = {(e.type, entity_text(part, e)) for e in part.entities}
    assert ("bold", "bold") in found
    assert ("code", "code") in found
    assert ("bold", "עולם") in found, "RTL text keeps its entity"
    assert ("text_link", "link") in found
    assert "**" not in part.text and "`" not in part.text


def test_nested_code_fences_stay_one_code_block():
    markdown = "Example:\n\n````markdown\n```python\nprint(1)\n```\n````\n\nDone."
    (part,) = render_markdown(markdown)
    pre = [e for e in part.entities if e.type == "pre"]
    assert len(pre) == 1
    assert entity_text(part, pre[0]) == "```python\nprint(1)\n```"
    assert part.text.endswith("Done.")


def test_long_answer_is_split_at_paragraphs_and_nothing_is_lost():
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor " * 30 for i in range(30)]
    markdown = "\n\n".join(paragraphs)
    parts = render_markdown(markdown)
    assert len(parts) > 1
    assert_sendable(parts)
    assert visible("".join(p.text for p in parts)) == visible(markdown)
    for part in parts:
        assert part.text.startswith("Paragraph "), "cuts fall between paragraphs"


def test_code_block_across_the_4096_boundary_is_two_valid_code_blocks():
    code = "\n".join(f"    value_{i} = compute({i})  # step {i}" for i in range(250))
    markdown = f"Intro line.\n\n```python\n{code}\n```\n\nOutro."
    parts = render_markdown(markdown)
    assert len(parts) >= 3
    assert_sendable(parts)
    code_parts = [p for p in parts if any(e.type == "pre" for e in p.entities)]
    assert len(code_parts) >= 2
    for part in code_parts:
        pre = next(e for e in part.entities if e.type == "pre")
        assert pre.language == "python"
        body = entity_text(part, pre)
        assert body.splitlines()[0].startswith("    value_"), "cut at a line, indent kept"
    shown_code = "\n".join(
        entity_text(p, e) for p in code_parts for e in p.entities if e.type == "pre"
    )
    assert visible(shown_code) == visible(code)


def test_limit_counts_utf16_units_so_emoji_take_two():
    markdown = "😀" * 3000  # 3000 characters, 6000 UTF-16 units
    parts = render_markdown(markdown)
    assert len(parts) == 2
    assert_sendable(parts)
    assert sum(len(p.text) for p in parts) == 3000


def test_hard_cut_never_splits_an_emoji_sequence():
    family = "👨\u200d👩\u200d👧\u200d👦"  # one glyph, seven code points
    text = "x" * 4090 + family + "tail"
    parts = split_message(text, ())
    assert_sendable(parts)
    assert "".join(p.text for p in parts) == text
    assert any(family in p.text for p in parts), "the family emoji stays whole"


def test_entity_crossing_a_cut_is_clipped_into_both_parts():
    text = "a" * 3000 + " " + "b" * 3000
    bold = MessageEntity("bold", 0, utf16_len(text))
    first, second = split_message(text, [bold])
    assert first.entities[0].length == utf16_len(first.text)
    assert second.entities[0].offset == 0
    assert second.entities[0].length == utf16_len(second.text)


def test_rtl_and_mixed_scripts_split_on_spaces():
    words = ["مرحبا", "שלום", "hello", "🙂", "Привет"] * 700
    parts = plain_parts(" ".join(words))
    assert len(parts) >= 2
    assert_sendable(parts)
    for part in parts:
        assert part.text.split(" ")[0] in words, "no word is cut in two"


def test_blank_or_empty_answers_still_give_a_message():
    assert plain_parts("   \n\n ") == [MessagePart(empty_reply())]
    assert render_markdown("") == [MessagePart(empty_reply())]
    assert render_markdown("<br>")[0].text.strip()


def test_plain_fallback_keeps_the_text_and_spells_out_links():
    (part,) = render_markdown("See **the docs** at [example](https://example.org/docs).")
    plain = without_formatting(part)
    assert plain.entities == ()
    assert plain.text == "See the docs at example (https://example.org/docs)."


def test_plain_fallback_of_a_full_part_stays_within_the_limit():
    markdown = "[x](https://example.org/" + "a" * 60 + ") " + "word " * 810
    (part,) = render_markdown(markdown)
    plain = without_formatting(part)
    assert utf16_len(part.text) + len(" (https://example.org/) ") + 60 > TELEGRAM_TEXT_LIMIT
    assert plain.text == part.text, "spelled-out links would not fit, so the text stays as shown"


def test_code_block_that_fits_one_message_starts_a_new_one_rather_than_split():
    prose = "Some explanation. " * 140  # about 2500 characters
    code = "\n\n".join(f"def f{i}():\n    return {i}" for i in range(100))  # blank lines inside
    parts = render_markdown(f"{prose}\n\n```python\n{code}\n```")
    assert_sendable(parts)
    assert len(parts) == 2
    assert parts[0].entities == ()
    (pre,) = parts[1].entities
    assert pre.type == "pre" and entity_text(parts[1], pre).strip() == code


@pytest.mark.parametrize(
    "markdown",
    [
        forget_usage(),
        "/forget <id> deletes one item, /forget all deletes everything.",
        "Use List<String> here, and <b>this</b> is shown as written.",
        "<div>\nan HTML block\n</div>",
        "a comment <!-- kept --> too",
    ],
)
def test_angle_brackets_are_shown_as_written_never_dropped_as_html(markdown):
    shown = "".join(part.text for part in render_markdown(markdown))
    assert visible(shown) == visible(markdown)


def test_angle_brackets_in_code_stay_code_and_links_stay_links():
    (part,) = render_markdown("Send `/forget <id>`, see <https://example.org>, 1 < 2 > 0.")
    assert part.text == "Send /forget <id>, see https://example.org, 1 < 2 > 0."
    assert {e.type for e in part.entities} == {"code", "text_link"}
