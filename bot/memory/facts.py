"""A durable fact found in a message, and the small helpers every extraction rule shares.

A rule is a regular expression matched against one clause of the user's message, from its
start, and a function that turns the match into a `Fact` or refuses it (None).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.memory.model import ItemType
from bot.memory.text import tokens

MAX_VALUE_CHARS = 200


@dataclass(frozen=True)
class Fact:
    """A durable statement found in the user's message, ready to become a memory item."""

    type: ItemType
    content: str
    confidence: float
    key: str | None = None
    """A slot such as "name": a newer fact with the same key replaces the older one."""


# -- values -------------------------------------------------------------------------------

_VAGUE_START = re.compile(
    r"^(?:it|it's|that|this|these|those|them|you|your|yours|what|how|when|which|so|too|"
    r"the (?:idea|way|answer|response|suggestion|reply|one)|a bit|a little|a lot|a tad|"
    r"sure|not sure|это|то|так|вас|тебя|ваш|твой)\b",
    re.IGNORECASE,
)
DISCOURSE_NOUNS = frozenset(
    "question point problem issue guess bad pleasure concern idea answer understanding mistake "
    "fault thought request task worry suggestion apologies apology opinion impression take "
    "first second last main only bet hope goal plan reason".split()
)


def clean_value(raw: str) -> str | None:
    """A cleaned value, or None when it is empty, vague ("it", "that") or too long."""
    value = raw.strip().strip(".,;:!…").strip().strip("\"'«»“”").strip()
    if not value or len(value) > MAX_VALUE_CHARS or _VAGUE_START.match(value):
        return None
    if not any(ch.isalnum() for ch in value):
        return None
    return value


def slot_key(*parts: str) -> str:
    return ":".join(" ".join(tokens(part)) or part.lower() for part in parts)


# -- rules -----------------------------------------------------------------------------

Match = re.Match[str]
Builder = Callable[[Match], Fact | None]
RULES: list[tuple[re.Pattern[str], Builder]] = []
"""Every rule, in the order the rule modules registered them; the first fact found wins."""


def rule(pattern: str) -> Callable[[Builder], Builder]:
    """Register the decorated builder for clauses matching `pattern` (case-insensitive)."""

    def register(build: Builder) -> Builder:
        RULES.append((re.compile(pattern, re.IGNORECASE), build))
        return build

    return register


def stated(
    item_type: ItemType, template: str, raw: str | None, confidence: float, key: str | None = None
) -> Fact | None:
    """`template` with the cleaned value in its `{}`; None when the value is empty or vague."""
    value = clean_value(raw or "")
    return Fact(item_type, template.format(value), confidence, key) if value else None


def procedure(template: str, goal_raw: str | None, how_raw: str | None, slot: str) -> Fact | None:
    """A how-to from a goal and the way to reach it; a newer way for the same goal replaces it."""
    goal, how = clean_value(goal_raw or ""), clean_value(how_raw or "")
    if goal is None or how is None:
        return None
    return Fact(ItemType.HOWTO, template.format(goal=goal, how=how), 0.85, slot_key(slot, goal))
