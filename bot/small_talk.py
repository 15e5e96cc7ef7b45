"""What is not worth remembering: one definition for short-term memory and RAG indexing.

The product spec's filters are the floor: a blank answer, a greeting from its list, or an
exchange shorter than `indexMinLength` characters. Beyond them, small talk is not stored
either: reactions ("lol that's hilarious", "wow I did not expect that"), thanks and
greetings in other words ("cheers mate", "good night, talk tomorrow"), remarks about the
conversation itself ("let me think about it", "sorry, typo, ignore that"), and the mood or
weather of the moment ("so tired today", "it's pouring here today") — unless the message
also carries something durable: a number, a name, a family member or pet, a habit ("every
sunday", "always"), health, "remember that…", news about someone ("Miso had her jabs this
morning"), something the user did ("signed off by the physio today, no more exercises"), or
a question for the bot. Erring towards keeping: a fact lost costs more than a line of
chatter kept.
"""

from __future__ import annotations

import re
import string

from bot.words import STOP_WORDS, WORD

SPEC_GREETINGS = frozenset(
    {"hi", "hello", "hey", "bye", "thanks", "thank you", "ok", "okay", "yes", "no",
     "привет", "пока", "спасибо", "да", "нет"}
)  # fmt: skip
"""The product spec's greeting list (`RAG.md`, "What Gets Filtered")."""

MIN_EXCHANGE_CHARS = 50
"""The spec's `indexMinLength` default: shorter exchanges are never worth keeping."""

_TRAILING = string.punctuation + "…¡¿ \t\n!?"

_PHATIC = frozenset(
    """lol lmao rofl haha hahaha hah ha heh hehe ok okay k kk cool nice wow whoa ugh hmm hm
    huh meh oops yay yep yeah yup nope nah sure great awesome perfect fine good bad right
    true fair gotcha thanks thank thx ty cheers mate hi hey hello bye goodbye morning night
    evening afternoon later cya brb gtg wait what sorry welcome np worries one indeed agreed
    exactly interesting funny hilarious wild crazy insane amazing lovely sweet happy
    yo hiya heya heyy sup tbh same mm mmm mhm maybe guess think point sense makes sounds
    talk chat later soon bed gotta honestly actually useful helpful helps idea totally
    alright noted oh ah yet
    monday mondays tuesday wednesday thursday friday fridays saturday sunday weekend
    привет пока спасибо ха хаха ахаха лол ок окей круто класс понятно ясно ладно хорошо
    отлично смешно доброе утро ночи спокойной вечер""".split()
)
"""Words that carry no fact on their own: a message made only of these is small talk."""

_OPENER = re.compile(
    r"^(?:lol|lmao|haha\w*|ha|heh|wow|whoa|omg|ugh|hmm+|meh|oops|brb|gtg|ok|okay|cool|nice|"
    r"thanks|thank you|thx|cheers|no worries|good (?:morning|night|evening|afternoon)|"
    r"hey|hi|hello|hold on|wait|sorry|interesting|let me think|give me a (?:sec|second|minute)|"
    r"that's (?:wild|crazy|funny|hilarious|great|awesome|cool|nice|fair|true|insane|amazing)|"
    r"that makes sense|спасибо|ха+|привет|ладно|понятно)\b",
    re.IGNORECASE,
)
"""How reactions, thanks, greetings and remarks about the chat itself begin."""

_MOMENT = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening|week)|"
    r"сегодня|сейчас)\b|^just\b|^(?:so|super|really) (?:tired|bored|hungry|sleepy)\b",
    re.IGNORECASE,
)
"""The mood, weather or errand of the moment."""

_META = re.compile(r"\bignore (?:it|that|this|the last)\b|\btypo\b", re.IGNORECASE)

_DURABLE = re.compile(
    r"\d|\b(?:always|usually|every (?:single )?(?:day|week|month|year|morning|evening|night|"
    r"weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|since|for years|"
    r"born|birthday|anniversary|allergic|allergy|diagnosed|doctor|doc|medication|pressure|"
    r"named|called|remember|note that|запомни|"
    r"(?:my|our|мой|моя|мои|наш|наша) (?:wife|husband|partner|spouse|son|daughter|kids?|child|"
    r"children|mum|mom|mother|dad|father|parents?|sister|brother|sibling|aunt|uncle|cousin|"
    r"niece|nephew|grand\w+|friend|boss|manager|team|company|dog|cat|pet)\b)",
    re.IGNORECASE,
)
"""Anything that makes a message worth keeping even if it also chats."""

_PROPER_NOUN = re.compile(r"(?<=[\w,;] )(?!I\b|I['’])[A-ZА-ЯЁ][\w'’-]+")
"""A capitalised word after the first: a name, a city, a product."""


_DID = re.compile(
    r"(?:[a-z]+ed|had|made|got|went|came|took|said|told|gave|found|left|saw|ate|fell|won|lost|"
    r"broke|bought|brought|caught|sent|spent|began|ran|met|paid|kept|wrote|drove|flew|grew|"
    r"became|did|finally|just)",
)
"""What someone did, as the second word of news about them: "Miso had…", "Tom made…"."""


def _news_about_someone(text: str) -> bool:
    """Whether the message opens with a name and what they did: "Miso had her jabs this
    morning", "Tom made dinner tonight". The moment in it does not make it the user's mood.
    A capitalised first word is a name unless a sentence may start with it anyway: a stop
    word, a reaction, the moment ("Today…"), or a verb or adverb ("Watched…", "Feeling…",
    "Finally…"); and what follows must be something done, not a state ("Weather is…")."""
    words = text.split(maxsplit=2)
    if len(words) < 2 or not words[0][:1].isupper() or not words[0].isalpha():
        return False
    first, second = words[0], words[1].lower().rstrip(",.!?;:")
    plain = first.lower()
    if plain in STOP_WORDS or plain in _PHATIC or plain.endswith(("ed", "ing", "ly")):
        return False
    if _OPENER.match(first) or _MOMENT.match(first):
        return False
    return _DID.fullmatch(second) is not None


DONE_MIN_WORDS = 5
"""Content words a report of something done holds, beyond reactions: "signed off by the physio
today, no more exercises" (6) is news; "finished work today, so tired" (3) is the moment."""

_DONE = re.compile(r"^(?:(?:i|we)\s+)?(?:finally\s+)?(\w+)", re.IGNORECASE)


def _tells_something_done(text: str, words: list[str]) -> bool:
    """Whether the message reports something the user did, when it happened being the moment
    in it: "walked to the end of the street without the stick this morning", "got my new
    residence card this morning, valid for five more years". It opens with what was done (a
    past tense, after "I", "we" or "finally" at most; "just…" is the moment) and says enough
    (`DONE_MIN_WORDS` of `words`, the message's content words, not counting reactions): "so
    tired today" and "it's pouring here today" tell no deed."""
    opening = _DONE.match(text)
    if opening is None or _DID.fullmatch(verb := opening.group(1).lower()) is None:
        return False
    said = [word for word in words if word not in _PHATIC]
    return verb not in ("just", "finally") and len(said) >= DONE_MIN_WORDS


def is_greeting(text: str) -> bool:
    """One of the spec's greetings, whatever the case and trailing punctuation."""
    return text.strip().lower().rstrip(_TRAILING) in SPEC_GREETINGS


def is_small_talk(user_text: str) -> bool:
    """True when the user's message holds nothing worth remembering (see the module doc)."""
    text = " ".join(user_text.split())
    if not text or is_greeting(text):
        return True
    if _DURABLE.search(text) or _PROPER_NOUN.search(text) or _news_about_someone(text):
        return False
    words = [word for word in WORD.findall(text.lower()) if word not in STOP_WORDS]
    if all(word in _PHATIC for word in words):  # none at all: "why?", "what about you?"
        return True
    if "?" in text:  # "hi, how do I add a healthcheck?" asks for something: keep it
        return False
    if _OPENER.match(text) or _META.search(text):
        return True
    return bool(_MOMENT.search(text)) and not _tells_something_done(text, words)


def is_trivial_exchange(
    user_text: str, assistant_text: str | None, min_length: int = MIN_EXCHANGE_CHARS
) -> bool:
    """Not worth storing: a blank answer, a short exchange, or small talk."""
    if not assistant_text or not assistant_text.strip():
        return True
    if len(user_text) + len(assistant_text) < min_length:
        return True
    return is_small_talk(user_text)
