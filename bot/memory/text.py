"""Words as memory sees them: lowercased, stop words dropped, English and Russian stemmed.

One tokenizer serves the index, the query and the fingerprint, so "deployed", "deploying" and
"deploy" meet, and "сервера" finds "сервер". Stems are cached: a user's vocabulary is small.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from bot.words import STOP_WORDS, WORD

_POSSESSIVE = re.compile(r"['’]s$")
_JOINER = re.compile(r"[.'’-]")
_CYRILLIC = re.compile(r"[а-яё]")

_ENGLISH = Stemmer.Stemmer("english")
_RUSSIAN = Stemmer.Stemmer("russian")


def tokens(text: str) -> list[str]:
    """Stems of the meaningful words of `text`, in order, repeats kept (term frequency).

    A compound such as `docker-compose` or `config.yaml` counts whole and by its worded parts,
    so a question about "compose" still finds it; `10.0.0.5` stays whole.
    """
    found: list[str] = []
    for word in WORD.findall(text.lower()):
        # Most words are plain: the str checks below skip the regexes for them (a cold load
        # of a heavy user's memory tokenizes every item).
        joined = not word.isalnum()
        if joined:
            word = _POSSESSIVE.sub("", word)
        if word in STOP_WORDS:
            continue
        found.append(_stem(word))
        if joined and _JOINER.search(word):
            parts = _JOINER.split(word)
            found += [_stem(p) for p in parts if p not in STOP_WORDS and not p.isdigit()]
    return found


def term_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if _CYRILLIC.search(word):
        return _RUSSIAN.stemWord(word)
    if word.isascii() and word.isalpha():
        return _ENGLISH.stemWord(word)
    return word  # numbers, addresses (10.0.0.5), mixed tokens: kept whole
