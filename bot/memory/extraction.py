"""What is worth remembering from one exchange.

Durable facts come only from sentences in which the user states something about themselves
or their work with a recognised pattern ("my name is…", "I prefer…", "we deploy with…",
"remember that…", "to restart X, run Y", and their Russian counterparts). Questions,
conditionals ("if my name were…") and chatter ("I like that", "my question is…") are not
facts. The exchange itself is kept as a low-confidence episode unless it is trivial. Words
such as "should" or "error" mean nothing here: that is how other bots fill memory with junk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from bot.memory import rules_en, rules_ru  # noqa: F401  (registering their rules, English first)
from bot.memory.facts import RULES, Fact, clean_value
from bot.memory.model import ItemType
from bot.memory.text import tokens

# -- sentences ----------------------------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_SUBJECT = r"(?:i|i'm|i’m|my|we|we're|we’re|our|я|мы|меня|мой|моя|мне|у меня)\b"
_CLAUSE_BREAK = re.compile(
    rf"\s*[,;]\s*(?:and\s+|but\s+|и\s+|а\s+|но\s+)?(?={_SUBJECT})|\s+(?:and|but|и|а|но)\s+(?={_SUBJECT})",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:oh|ah|well|so|also|btw|by the way|actually|and|ok|okay|hi|hey|hello|fyi|just so you know|"
    r"кстати|ну|а|и|так|привет|слушай)\b[\s,:—-]*",
    re.IGNORECASE,
)
_NOT_A_STATEMENT = re.compile(
    r"^(?:if|when|whether|suppose|imagine|what if|unless|do you|did i|what|who|where|how|why|"
    r"если|допустим|представь|что|кто|где|как|почему)\b",
    re.IGNORECASE,
)


def clauses(text: str) -> Iterator[str]:
    """Statements of `text`: code blocks dropped, sentences and subject-led clauses split."""
    for sentence in _SENTENCE_END.split(_CODE_BLOCK.sub(" ", text)):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        for clause in _CLAUSE_BREAK.split(sentence):
            clause = _strip_filler(clause.strip().strip(".!…").strip())
            if clause and not _NOT_A_STATEMENT.match(clause):
                yield clause


def _strip_filler(clause: str) -> str:
    while True:
        stripped = _FILLER.sub("", clause, count=1)
        if stripped == clause:
            return clause
        clause = stripped


# -- "remember that ..." wraps any other statement ---------------------------------------

_REMEMBER = re.compile(
    r"^(?:please\s+|пожалуйста,?\s+)?(?:remember|note|keep in mind|don't forget|do not forget|"
    r"запомни|запиши|учти|не забудь)(?:\s+that|,?\s+что)?[\s,:—-]+(?P<rest>.+)$",
    re.IGNORECASE,
)
EXPLICIT_CONFIDENCE = 0.95
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_RU_REMEMBER = "Пользователь просил запомнить: {}"


_REMEMBER_AFTER = re.compile(
    r"[\s,;:—-]+(?:please\s+)?(?:remember|note|keep in mind|don't forget)\s+(?:that|this|it)$",
    re.IGNORECASE,
)
"""A request to remember after the statement: "I'm allergic to peanuts, remember that"."""
_FIRST_PERSON = [
    (re.compile(r"\bI(?:'m|’m| am)\b"), "the user is"),
    (re.compile(r"\bI(?:'ve|’ve| have)\b"), "the user has"),
    (re.compile(r"\bI\b"), "the user"),
    (re.compile(r"\b(?:my|My)\b"), "the user's"),
    (re.compile(r"\b(?:me|Me)\b"), "the user"),
]
"""Pronouns of a note to remember that no rule reads, turned to the third person: the item
says what is true of the user, not the words they asked with."""


def extract_facts(user_text: str) -> list[Fact]:
    """Durable facts the user states in `user_text`, in order, without repeats."""
    facts: list[Fact] = []
    for clause in clauses(user_text):
        asked_after = _REMEMBER_AFTER.search(clause)
        if asked_after is not None:
            clause = f"remember that {clause[: asked_after.start()]}"
        fact = _explicit(clause) or _match(clause)
        if fact is not None and fact not in facts:
            facts.append(fact)
    return facts


def _explicit(clause: str) -> Fact | None:
    remembered = _REMEMBER.match(clause)
    if remembered is None:
        return None
    rest = _strip_filler(remembered["rest"].strip())
    inner = _match(rest)
    if inner is not None:
        return replace(inner, confidence=max(inner.confidence, EXPLICIT_CONFIDENCE))
    note = clean_value(rest)
    if note is None or len(tokens(note)) < 2:
        return None
    if _CYRILLIC.search(note):
        return Fact(ItemType.FACT, _RU_REMEMBER.format(note), EXPLICIT_CONFIDENCE)
    return Fact(ItemType.FACT, _third_person(note), EXPLICIT_CONFIDENCE)


def _third_person(note: str) -> str:
    """ "my train leaves at 7:10" -> "The user's train leaves at 7:10." """
    for pronoun, replacement in _FIRST_PERSON:
        note = pronoun.sub(replacement, note)
    return f"{note[0].upper()}{note[1:]}."


def _match(clause: str) -> Fact | None:
    for pattern, build in RULES:
        found = pattern.match(clause)
        if found is not None:
            fact = build(found)
            if fact is not None:
                return fact
    return None
