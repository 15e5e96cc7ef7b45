"""A text of the bot, defined once in every language it speaks, with typed placeholders.

Each text is a small function of its placeholders returning a `Say` with one version per
language, decorated with `@phrase`:

    @phrase
    def forgotten(content: str) -> Say:
        return Say(en=f"Forgotten: {content}", ru=f"Забыто: {content}")

Calling `forgotten(content=...)` gives the version of the current language (`speaking`).
mypy checks every call's placeholders; a missing language is a missing `Say` field, which
mypy flags too; `tests/unit/test_i18n_catalogue.py` renders every phrase in every language
and checks each placeholder shows up in each. Plurals and number formats are code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, ParamSpec

from bot.i18n.language import Language, current_language

P = ParamSpec("P")


@dataclass(frozen=True)
class Say:
    """One text in every language of `Language`, a field each (a new language is a field)."""

    en: str
    ru: str

    def in_(self, language: Language) -> str:
        text: str = getattr(self, language.value)
        return text

    def __str__(self) -> str:
        return self.in_(current_language())


class Phrase(Generic[P]):
    """A catalogue entry: call it to get the text in the current language."""

    def __init__(self, versions: Callable[P, Say]) -> None:
        self.versions = versions
        self.name = versions.__name__
        self.__doc__ = versions.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> str:
        return self.versions(*args, **kwargs).in_(current_language())

    def say(self, *args: P.args, **kwargs: P.kwargs) -> Say:
        """Every language's version, for who renders later or elsewhere (the command menu)."""
        return self.versions(*args, **kwargs)


def phrase(versions: Callable[P, Say]) -> Phrase[P]:
    return Phrase(versions)


def plural_en(count: int, one: str, many: str) -> str:
    """`1 turn`, `2 turns`, with the count formatted `1,234`."""
    return f"{count:,} {one if count == 1 else many}"


def plural_ru(count: int, one: str, few: str, many: str) -> str:
    """`1 ход`, `2 хода`, `5 ходов`, `21 ход`, with the count formatted `1 234`."""
    tens, units = count % 100, count % 10
    if units == 1 and tens != 11:
        word = one
    elif 2 <= units <= 4 and not 12 <= tens <= 14:
        word = few
    else:
        word = many
    return f"{number_ru(count)} {word}"


def number_ru(count: int) -> str:
    """`1 234`: Russian groups thousands with a (non-breaking) space."""
    return f"{count:,}".replace(",", "\u00a0")


def decimal_ru(value: float) -> str:
    """`2,5`: Russian writes a decimal comma."""
    return f"{value:g}".replace(".", ",")
