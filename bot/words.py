"""Words: the tokenising regex and stop words (English and Russian) shared by memory and RAG."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*")
"""A word, keeping compounds whole: `docker-compose`, `config.yaml`, `10.0.0.5`, `it's`."""

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


def content_words(text: str, limit: int = 64) -> list[str]:
    """The distinct words of `text` that carry meaning, in order, as written (case kept)."""
    seen: dict[str, str] = {}
    for word in WORD.findall(text):
        key = word.lower()
        if key not in STOP_WORDS and key not in seen and (len(key) > 1 or key.isdigit()):
            seen[key] = word
            if len(seen) == limit:
                break
    return list(seen.values())
