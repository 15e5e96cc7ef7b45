"""Words as memory sees them: lowercased, stop words dropped, English and Russian stemmed.

One tokenizer serves the index, the query and the fingerprint, so "deployed", "deploying" and
"deploy" meet, and "сервера" finds "сервер". Stems are cached: a user's vocabulary is small.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_JOINER = re.compile(r"[.'’-]")
_CYRILLIC = re.compile(r"[а-яё]")

_ENGLISH = Stemmer.Stemmer("english")
_RUSSIAN = Stemmer.Stemmer("russian")

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having he
    her here hers herself him himself his how i i'd i'll i'm i've if in into is isn't it it's its
    itself just let's me more most mustn't my myself no nor not now of off on once only or other
    ought our ours ourselves out over own please same she should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they this those through to
    too under until up very was wasn't we we'd we'll we're we've were weren't what what's when
    where which while who who's whom why will with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves also tell know remember did does
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
    мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был
    него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней
    для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того
    потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем
    всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего
    них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя
    такой им более всегда конечно всю между это мои моё мое напомни скажи
    """.split()
)


def tokens(text: str) -> list[str]:
    """Stems of the meaningful words of `text`, in order, repeats kept (term frequency).

    A compound such as `docker-compose` or `config.yaml` counts whole and by its worded parts,
    so a question about "compose" still finds it; `10.0.0.5` stays whole.
    """
    found: list[str] = []
    for word in _WORD.findall(text.lower()):
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
