"""The model's Markdown as Telegram text + entities, so no reply fails on "can't parse entities".

telegramify-markdown renders Markdown to plain text plus a list of entities: no MarkdownV2 or
HTML markup is ever sent, so unbalanced `*`, `_` or backticks in an answer cannot make Telegram
reject it. Should Telegram still refuse a part's entities, `without_formatting` gives the same
part as plain text, links spelled out.
"""

from __future__ import annotations

import logging

import pyromark
from telegramify_markdown import RenderConfig, convert, utf16_len
from telegramify_markdown.converter import STANDARD_OPTIONS

from bot.adapters.telegram.splitting import (
    TELEGRAM_TEXT_LIMIT,
    MessagePart,
    split_message,
    utf16_offsets,
)
from bot.i18n.catalogue import telegram as texts

log = logging.getLogger(__name__)

# An isolated render config: the library's global one is shared mutable state.
_RENDER_CONFIG = RenderConfig.isolated()
_HTML_PASSES = 50
"""Each pass escapes at least one `<`; an answer with more raw HTML than this keeps the rest."""


def render_markdown(markdown: str, limit: int = TELEGRAM_TEXT_LIMIT) -> list[MessagePart]:
    """Formatted parts of `markdown`, at least one, each within `limit` UTF-16 units."""
    try:
        text, entities = convert(html_as_text(markdown), config=_RENDER_CONFIG)
    except Exception as exc:  # a renderer bug must cost formatting, never the reply
        log.warning("[Telegram] Markdown rendering failed, sending plain text: %s", exc)
        return plain_parts(markdown, limit)
    return split_message(text, entities, limit) or plain_parts(markdown, limit)


def html_as_text(markdown: str) -> str:
    """`markdown` with every raw HTML tag escaped, so it is shown as written.

    CommonMark reads `<id>` in "/forget <id>" as an HTML tag, and the renderer drops HTML:
    the user would read "/forget  deletes". No HTML is ever sent to Telegram, so a `<` that
    starts a tag is escaped (`\\<`) instead; code, autolinks and a lone `<` are left alone.
    Escaping a block's first tag can turn the rest into inline tags, hence the passes.
    """
    if "<" not in markdown:
        return markdown
    for _ in range(_HTML_PASSES):
        source = markdown.encode("utf-8")
        starts = sorted(
            {
                source.find(b"<", where["start"], where["end"])
                for event, where in pyromark.events_with_range(markdown, options=STANDARD_OPTIONS)
                if _is_html(event)
            }
            - {-1}
        )
        if not starts:
            break
        for offset in reversed(starts):
            source = source[:offset] + b"\\" + source[offset:]
        markdown = source.decode("utf-8")
    return markdown


def _is_html(event: object) -> bool:
    if isinstance(event, dict):
        return "InlineHtml" in event or event.get("Start") == "HtmlBlock"
    return False


def plain_parts(text: str, limit: int = TELEGRAM_TEXT_LIMIT) -> list[MessagePart]:
    """`text` as unformatted parts, at least one (Telegram refuses an empty message)."""
    return split_message(text, (), limit) or [MessagePart(texts.empty_reply())]


def without_formatting(part: MessagePart, limit: int = TELEGRAM_TEXT_LIMIT) -> MessagePart:
    """`part` as plain text, for when Telegram rejects its entities.

    Link targets are spelled out after their text when that still fits in one message;
    otherwise the text stays exactly as shown, which always fits.
    """
    links = sorted(
        (e.offset + e.length, e.url) for e in part.entities if e.type == "text_link" and e.url
    )
    if not links:
        return MessagePart(part.text)
    index_of = {offset: i for i, offset in enumerate(utf16_offsets(part.text))}
    pieces, previous = [], 0
    for end, url in links:
        cut = index_of.get(end, len(part.text))
        pieces += [part.text[previous:cut], f" ({url})"]
        previous = cut
    pieces.append(part.text[previous:])
    spelled_out = "".join(pieces)
    return MessagePart(spelled_out if utf16_len(spelled_out) <= limit else part.text)
