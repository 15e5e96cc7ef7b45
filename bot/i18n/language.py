"""Which language the bot speaks in the message being handled.

The language is picked once per incoming message (the user's own choice, else their
Telegram `language_code`, else English) and set for the handling of that message with
`speaking`. It lives in a context variable, as Babel's and Django's active locale do:
asyncio copies it into every task the handling starts, so a command, a notice of the tool
loop or a status line renders in the asker's language without a parameter threaded through
every call, and two chats handled at once never see each other's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum


class Language(StrEnum):
    """A language the bot's own texts exist in; English is the fallback for all others."""

    EN = "en"
    RU = "ru"


FALLBACK = Language.EN
_current: ContextVar[Language] = ContextVar("bot_language", default=FALLBACK)


def language_of_code(code: str | None) -> Language | None:
    """The language an IETF tag or a POSIX locale names (`ru`, `ru-RU`, `ru_RU.UTF-8`),
    or None when the bot does not speak it (or there is no tag)."""
    if not code:
        return None
    primary = code.replace("_", "-").split("-")[0].split(".")[0].strip().lower()
    try:
        return Language(primary)
    except ValueError:
        return None


def current_language() -> Language:
    """The language of the message being handled; English outside any."""
    return _current.get()


@contextmanager
def speaking(language: Language) -> Iterator[None]:
    """Render the bot's texts in `language` within this block (and the tasks it starts)."""
    token = _current.set(language)
    try:
        yield
    finally:
        _current.reset(token)
