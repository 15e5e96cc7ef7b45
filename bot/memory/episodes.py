"""Turning one exchange into memory items: the durable facts in it, and the exchange itself.

The exchange becomes an episodic item only when it has substance: small talk, blank answers
and very short exchanges are dropped by the same definition RAG indexing uses
(`bot/small_talk.py`). An exchange asked again merges with the first one (same
fingerprint: the same words in the user's message) and grows more confident each time, which
is what promotes it to semantic or procedural memory: repetition, never a keyword.
"""

from __future__ import annotations

import re
from datetime import datetime

from bot.conversation.scope import Speaker
from bot.memory.dates import resolve_relative_dates
from bot.memory.extraction import extract_facts
from bot.memory.facts import Fact
from bot.memory.model import TRAITS, ItemType, Layer, MemoryItem, fingerprint, new_item, shorten
from bot.small_talk import is_small_talk, is_trivial_exchange

EXCHANGE_USER = "User: "
EXCHANGE_ANSWER = " → Assistant: "
"""How an episode's content frames the two sides of the exchange."""
USER_CHARS = 280
ASSISTANT_CHARS = 220
SHORT_ANSWER_CHARS = 100
"""An answer to a question this short may state a fact ("Your flight is on the 12th."); a
longer one is the assistant's advice, which `# Memory` leaves out to spend its budget on the
user's words. The answer to a statement is an acknowledgement, left out too."""
_QUESTION = re.compile(
    r"\?\s*$|^(?:[^:]{1,40}: )?(?:what|when|where|who|which|how|why|is|are|do|does|did|can)\b",
    re.IGNORECASE,
)

EPISODE_CONFIDENCE = 0.5
_USERS, _USER = "The user's ", "The user "
"""How the English rules begin a fact; a group's item names the speaker there instead."""
_SHARED_SLOTS = ("our:", "we:", "мы:")
"""Slots about the team rather than the speaker: in a group they belong to the whole group."""

_HOWTO_QUESTION = re.compile(r"^(?:how|как)\b", re.IGNORECASE)
_HOWTO_ANSWER = re.compile(r"`|\$ |\bcommand|\bкоманд", re.IGNORECASE)


def items_from_exchange(
    user_text: str,
    assistant_text: str | None,
    source: str,
    now: datetime,
    episode_ttl_days: int | None,
    with_rules: bool = True,
    speaker: Speaker | None = None,
) -> list[MemoryItem]:
    """The facts the user stated, then the exchange as an episode (unless trivial).

    Small talk yields nothing at all: "my brain is fried" is not a fact about the user.
    With a `speaker` (a group's memory) every item names them instead of "the user"."""
    if is_small_talk(user_text):
        return []
    facts = extract_facts(user_text) if with_rules else []
    found = [fact_item(fact, source, now) for fact in facts]
    if not is_trivial_exchange(user_text, assistant_text):
        found.append(episode(user_text, assistant_text or "", source, now, episode_ttl_days))
    return [attributed(item, speaker) for item in found] if speaker is not None else found


def attributed(item: MemoryItem, speaker: Speaker) -> MemoryItem:
    """`item`, learned in a group, as said by `speaker`: "Anna's PIN is 4512." rather than
    "The user's PIN is 4512.", and a slot ("name", "home") that is hers alone, so another
    member's "my name is…" never replaces it. A slot of the group's own ("our wifi password",
    "we deploy with…") stays shared: any member may update it. An exchange keeps its
    fingerprint (the words asked): the same question from two members is one episode."""
    content = item.content
    if content.startswith(EXCHANGE_USER):
        content = f"{speaker.name}: {content[len(EXCHANGE_USER) :]}"
    elif content.startswith(_USERS):
        content = f"{speaker.name}'s {content[len(_USERS) :]}"
    elif content.startswith(_USER):
        content = f"{speaker.name} {content[len(_USER) :]}"
    else:
        content = f"{speaker.name}: {content}"
    slot = next(
        (tag for tag in item.tags if fingerprint(item.type, "", tag) == item.fingerprint), None
    )
    if item.type is ItemType.EXCHANGE or (slot is not None and slot.startswith(_SHARED_SLOTS)):
        stamp = item.fingerprint
    elif slot is not None:
        stamp = fingerprint(item.type, "", f"{speaker.id}:{slot}")
    else:
        stamp = fingerprint(item.type, content)
    return item.model_copy(
        update={
            "content": content,
            "tags": [
                tag if tag.startswith(_SHARED_SLOTS) else f"{speaker.id}:{tag}" for tag in item.tags
            ],
            "fingerprint": stamp,
        }
    )


def fact_item(fact: Fact, source: str, now: datetime) -> MemoryItem:
    return new_item(
        fact.type, fact.content, source=source, confidence=fact.confidence, now=now, key=fact.key
    )


def episode(
    user_text: str, assistant_text: str, source: str, now: datetime, ttl_days: int | None
) -> MemoryItem:
    """The exchange, identified by the user's words: the same question again is a repeat.
    Relative days in them are resolved to dates as of `now`, when they were said."""
    user = shorten(resolve_relative_dates(user_text, now), USER_CHARS)
    answer = shorten(assistant_text, ASSISTANT_CHARS)
    return new_item(
        ItemType.EXCHANGE,
        f"{EXCHANGE_USER}{user}{EXCHANGE_ANSWER}{answer}",
        title=shorten(user_text, 60),
        source=source,
        confidence=EPISODE_CONFIDENCE,
        now=now,
        identified_by=user_text,
        ttl_days=ttl_days,
    )


def said_and_answered(content: str) -> tuple[str, str]:
    """An episode's two sides: what the user said (a group's keeps the speaker's name, "Anna:
    …") and the assistant's answer."""
    said, _, answer = content.partition(EXCHANGE_ANSWER)
    return said.removeprefix(EXCHANGE_USER), answer


def item_text(item: MemoryItem) -> str:
    """What an item says, as its vector and the ranking of exchanges read it: for a past
    exchange, the user's own words (the answer around them is mostly the assistant's
    phrasing, which would pull every exchange towards every other)."""
    if item.type is ItemType.EXCHANGE and item.content.startswith(EXCHANGE_USER):
        return said_and_answered(item.content)[0]
    return item.content


def episode_line_text(content: str) -> str:
    """What `# Memory` shows of an episode: the user's words, and the answer only when it
    answered a question with a fact (`answer_adds_a_fact`): "Until 6 pm.", not "Okay, good
    to know. Let me know if I can help."."""
    said, answer = said_and_answered(content)
    if _QUESTION.search(said) and answer_adds_a_fact(said, answer):
        return f"{said} → {answer}"
    return said


_OPENERS = frozenset(
    """i i'm yes no okay ok sure thanks thank sorry great good nice oh oof ah aw wow hmm well
    let that that's this it it's you you're your the a an glad sounds happy lovely congrats
    congratulations absolutely anything something what how noted got""".split()
)
"""Capitalised words that open a reply rather than name anything."""
NAME_ALONE_WORDS = 3
"""A sentence this short may open with a name ("Miso.", "Porto, I think.")."""


def _names_and_numbers(answer: str) -> list[str]:
    """The numbers of `answer`, and its capitalised words that look like names: inside a
    sentence, or opening a very short one; never one of `_OPENERS`."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", answer):
        words = re.findall(r"\w+", sentence)
        for at, word in enumerate(words):
            name = word[0].isupper() and word.lower() not in _OPENERS
            if any(c.isdigit() for c in word) or (
                name and (at > 0 or len(words) <= NAME_ALONE_WORDS)
            ):
                found.append(word.lower())
    return found


def answer_adds_a_fact(said: str, answer: str) -> bool:
    """Whether an answer is worth its characters in `# Memory`: short (`SHORT_ANSWER_CHARS`),
    not a question back, and stating something the user did not say: a number, or a name
    that is not among the user's words. Politeness and offers of help hold neither."""
    answer = answer.strip()
    if not answer or len(answer) > SHORT_ANSWER_CHARS or answer.endswith("?"):
        return False
    said_words = {word.lower() for word in re.findall(r"\w+", said)}
    return any(word not in said_words for word in _names_and_numbers(answer))


def promotable(item: MemoryItem, threshold: float) -> bool:
    """Whether a repeated exchange becomes a how-to: confident enough (asked again and again)
    and looking like one. Anything else said again stays an episode, more confident: a
    repeat of "started a new series, already hooked" is not a fact about the user, and
    facts come from what the user states (the rules, or LLM extraction)."""
    if item.layer is not Layer.EPISODIC or item.confidence < threshold:
        return False
    return bool(_HOWTO_QUESTION.search(item.title) or _HOWTO_ANSWER.search(item.content))


def promoted(item: MemoryItem, now: datetime) -> MemoryItem:
    """`item` moved out of the episodic layer into procedural memory, as a how-to."""
    item_type = ItemType.HOWTO
    return item.model_copy(
        update={
            "layer": TRAITS[item_type].layer,
            "type": item_type,
            "ttl_days": None,
            "salience": max(item.salience, TRAITS[item_type].salience),
            "updated_at": now,
        }
    )
