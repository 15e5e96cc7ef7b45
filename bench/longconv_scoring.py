"""How the long-conversation evaluation scores a context, and its plain baselines.

A context is a list of lines (the bot's `# Memory` lines, or a baseline's messages). A
message is **held** by a context when one line of it holds at least `HELD_SHARE` of the
message's content words. Content words are lower-cased words of 3+ characters (or holding a
digit) that are not stop words, compared by their first `STEM` characters ("engaged" matches
"engagement", "climbing" "climbed"), so a fact the bot rewrote ("The user's sister Leila got
engaged") still holds the message it came from. One line, not the whole context, so that
words scattered over unrelated lines do not add up to a message that is not there.

The baselines rank the user's own messages: `Bm25` over the same content words, or the
cosine of their vectors; `pack` then takes them best first within the bot's characters.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

HELD_SHARE = 0.6
STEM = 5
WORD = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset(
    """
    the and for are but not you your yours with this that these those was were has have had
    been being from they them their there here what when where which who whom why how all any
    can could would should will just about into over than then too very also its it's our ours
    out off did does doing done get got like lol yeah okay one some more most much many such
    only own same she her hers him his himself herself myself yourself itself ourselves
    themselves let may might must shall upon onto via per who's i'm i've i'd i'll don't didn't
    it'd isn't wasn't aren't weren't haven't hasn't can't won't user assistant
    """.split()
)


def content_words(text: str) -> list[str]:
    """The words that carry meaning, each cut to its first `STEM` characters."""
    words = (word.lower() for word in WORD.findall(text))
    return [
        word[:STEM]
        for word in words
        if word not in STOP_WORDS and (len(word) >= 3 or any(c.isdigit() for c in word))
    ]


def holds(lines: Sequence[str], message: str, share: float = HELD_SHARE) -> bool:
    """Whether one of `lines` holds at least `share` of `message`'s content words."""
    wanted = set(content_words(message))
    if not wanted:
        return False
    return any(len(wanted & set(content_words(line))) >= share * len(wanted) for line in lines)


def contains_answers(context: str, answers: Sequence[str]) -> bool:
    """Whether every expected answer is in `context` (any of its `a|b` forms, any case)."""
    lowered = context.lower()
    return all(any(form.lower() in lowered for form in answer.split("|")) for answer in answers)


def pack(ranked: Sequence[str], budget: int) -> list[str]:
    """Lines best first while the context (lines joined by newlines) stays within `budget`
    characters; a line that does not fit is skipped and a shorter one after it may still go
    in, as the bot packs `# Memory`."""
    packed: list[str] = []
    used = -1  # no newline before the first line
    for line in ranked:
        if used + 1 + len(line) <= budget:
            packed.append(line)
            used += 1 + len(line)
    return packed


class Bm25:
    """Okapi BM25 over `documents`' content words (k1 1.2, b 0.75)."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self._docs = [Counter(content_words(text)) for text in documents]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        self._mean_length = sum(self._lengths) / len(self._docs) if self._docs else 0.0
        frequency = Counter(word for doc in self._docs for word in doc)
        count = len(self._docs)
        self._idf = {
            word: math.log(1 + (count - seen + 0.5) / (seen + 0.5))
            for word, seen in frequency.items()
        }
        self._k1, self._b = k1, b

    def scores(self, query: str) -> list[float]:
        words = set(content_words(query))
        return [
            self._score(words, doc, length)
            for doc, length in zip(self._docs, self._lengths, strict=True)
        ]

    def rank(self, query: str) -> list[int]:
        """Document indices, best first; ties keep the documents' order."""
        scores = self.scores(query)
        return sorted(range(len(scores)), key=lambda at: -scores[at])

    def _score(self, words: set[str], doc: Counter[str], length: int) -> float:
        norm = self._k1 * (1 - self._b + self._b * length / (self._mean_length or 1))
        return sum(
            self._idf[word] * doc[word] * (self._k1 + 1) / (doc[word] + norm)
            for word in words
            if word in doc
        )
