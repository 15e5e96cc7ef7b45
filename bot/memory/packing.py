"""From ranked items to the `# Memory` text, within the token budgets.

The overflow rule: items go in best first while the pack stays within the soft budget. An
item that would pass it still goes in when its score is at least `overflowMinScore` and the
pack stays within the hard budget; any other item that does not fit is skipped (a smaller,
weaker one after it may still fit). Nothing ever passes the hard budget: one over-long item is
cut to fit rather than crowding everything else out. An exchange is left out when an item
drawn from the same turn (a fact stated in it) is already in: the fact says it shorter.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config.model import MemoryConfig
from bot.conversation.messages import CHARS_PER_TOKEN
from bot.memory.documents import prompt_line as document_line
from bot.memory.episodes import episode_line_text, said_and_answered
from bot.memory.model import TRAITS, ItemType, MemoryItem, ScoredItem, shorten
from bot.memory.text import term_set

MAX_ITEM_CHARS = 480
"""One line of the pack at most; a long note is shortened with an ellipsis."""


@dataclass(frozen=True)
class MemoryPack:
    lines: list[str]
    items: list[ScoredItem]
    tokens: int
    """Sum of the lines' estimates; never less than the estimate of the joined text."""

    def text(self) -> str:
        return "\n".join(self.lines)


def estimate_tokens(text: str) -> int:
    """The same rough count as the history budget: about four characters per token, plus one."""
    return len(text) // CHARS_PER_TOKEN + 1


def render_line(item: MemoryItem, max_chars: int = MAX_ITEM_CHARS) -> str:
    """`- [fact 2025-03-01 #ab12cd34ef] The user's server is at 10.0.0.5.`: type, date, id."""
    head = f"- [{TRAITS[item.type].label} {item.updated_at:%Y-%m-%d} #{item.id}] "
    body = " ".join(item.content.split())
    room = max(max_chars - len(head), 16)
    if len(body) > room:
        body = body[: room - 1].rstrip() + "…"
    return head + body


def prompt_line(item: MemoryItem, max_chars: int = MAX_ITEM_CHARS) -> str:
    """A line of `# Memory`. A fact as `render_line` has it (its id lets the model forget it);
    a past exchange compact, `- [2025-03-01] what the user said`, dated when it was last said: the
    budget goes to the user's own words rather than labels, ids and the assistant's advice."""
    if item.type is ItemType.DOCUMENT:
        return document_line(item, max_chars)
    if item.type is not ItemType.EXCHANGE:
        return render_line(item, max_chars)
    head = f"- [{item.updated_at:%Y-%m-%d}] "
    return head + shorten(episode_line_text(item.content), max(max_chars - len(head), 16))


def pack(ranked: list[ScoredItem], config: MemoryConfig) -> MemoryPack:
    """Apply the budgets and the overflow rule to `ranked` (best first)."""
    lines: list[str] = []
    chosen: list[ScoredItem] = []
    used = 0
    turns: dict[str, list[MemoryItem]] = {}
    for scored in ranked:
        item = scored.item
        if item.source and _said_already(item, turns.get(item.source, [])):
            continue
        line = prompt_line(item)
        cost = estimate_tokens(line)
        fits_soft = used + cost <= config.soft_budget_tokens
        may_overflow = scored.score >= config.overflow_min_score
        if not fits_soft and not (may_overflow and used + cost <= config.hard_budget_tokens):
            if chosen or not may_overflow:
                continue
            # The best item alone is larger than the hard budget: shorten it to fit.
            line = prompt_line(item, config.hard_budget_tokens * CHARS_PER_TOKEN - CHARS_PER_TOKEN)
            cost = estimate_tokens(line)
        lines.append(line)
        chosen.append(scored)
        used += cost
        if item.source:
            turns.setdefault(item.source, []).append(item)
    return MemoryPack(lines, chosen, used)


SAID_BY_FACT = 0.6
"""The share of an exchange's words a fact of the same turn must hold to stand in for it."""


def _said_already(item: MemoryItem, same_turn: list[MemoryItem]) -> bool:
    """Whether an item of the same turn already in the pack says what `item` says.

    A fact is in the user's own words of its turn, so the turn's exchange says it. An exchange
    is said by a fact of its turn only when the fact holds most of its words ("my name is
    Marta"); "started a Spanish course, Tuesday nights, my accent is tragic" says more than
    "The user's accent is tragic."
    """
    if item.type is not ItemType.EXCHANGE:
        return any(kept.type is ItemType.EXCHANGE for kept in same_turn)
    said = term_set(said_and_answered(item.content)[0])
    return any(len(said & term_set(kept.content)) >= SAID_BY_FACT * len(said) for kept in same_turn)
