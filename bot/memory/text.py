"""Words as memory sees them: lowercased, stop words dropped, English and Russian stemmed.

One tokenizer serves the index, the query and the fingerprint, so "deployed", "deploying" and
"deploy" meet, and "сервера" finds "сервер". A cold load of a heavy user tokenizes every item,
so the terms of each whitespace-separated chunk ("nginx,", "docker-compose", "the") are
cached: a user's vocabulary is small, and most chunks are looked up in a dict, not re-parsed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

import Stemmer

from bot.words import STOP_WORDS, WORD

_POSSESSIVE = re.compile(r"['’]s$")
_JOINER = re.compile(r"[.'’-]")
_CYRILLIC = re.compile(r"[а-яё]")

_ENGLISH = Stemmer.Stemmer("english")
_RUSSIAN = Stemmer.Stemmer("russian")

CHUNK_CACHE_LIMIT = 200_000
"""Chunks whose terms are kept; the cache starts afresh when it is full."""
_CHUNK_TERMS: dict[str, tuple[str, ...]] = {}


def tokens(text: str) -> list[str]:
    """Stems of the meaningful words of `text`, in order, repeats kept (term frequency).

    A compound such as `docker-compose` or `config.yaml` counts whole and by its worded parts,
    so a question about "compose" still finds it; `10.0.0.5` stays whole.
    """
    # A word never spans whitespace, so the terms of a text are those of its chunks in turn.
    # Lowercase the whole text first: a few letters (a final sigma) lowercase by context.
    chunks = text.lower().split()
    try:
        return list(chain.from_iterable(map(_CHUNK_TERMS.__getitem__, chunks)))
    except KeyError:  # a chunk not seen yet (or the cache started afresh meanwhile)
        return list(chain.from_iterable(map(_chunk_terms, chunks)))


def term_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def _chunk_terms(chunk: str) -> tuple[str, ...]:
    terms = _CHUNK_TERMS.get(chunk)
    if terms is None:
        terms = tuple(_words_terms(chunk))
        if len(_CHUNK_TERMS) >= CHUNK_CACHE_LIMIT:
            _CHUNK_TERMS.clear()
        _CHUNK_TERMS[chunk] = terms
    return terms


def _words_terms(lowered: str) -> list[str]:
    found: list[str] = []
    for word in WORD.findall(lowered):
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


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if _CYRILLIC.search(word):
        return _RUSSIAN.stemWord(word)
    if word.isascii() and word.isalpha():
        return _ENGLISH.stemWord(word)
    return word  # numbers, addresses (10.0.0.5), mixed tokens: kept whole
