"""From ranked items to the `# Memory` text, within the token budgets.

The overflow rule: items go in best first while the pack stays within the soft budget. An
item that would pass it still goes in when its score is at least `overflowMinScore` and the
pack stays within the hard budget; any other item that does not fit is skipped (a smaller,
weaker one after it may still fit). Nothing ever passes the hard budget: one over-long item is
cut to fit rather than crowding everything else out. A turn says a thing once: of a fact and
the exchange it was drawn from, the fact when it holds most of the exchange's words (it says
it shorter, with an id to forget it by), else the exchange (it says more), whichever came
first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date

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
    """The estimate of the text, headings and all (`estimate_tokens`); 0 when empty."""

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
    """A line of `# Memory`, under its date's heading (`day_heading`): a fact as
    `- #ab12cd34ef The user's server is at 10.0.0.5.` (its id lets the model forget it), a past
    exchange as `- what the user said`. No type label and no date on the line: the budget goes
    to the user's own words rather than labels, ids and the assistant's advice."""
    if item.type is ItemType.DOCUMENT:
        return document_line(item, max_chars)
    if item.type is ItemType.EXCHANGE:
        return "- " + shorten(episode_line_text(item.content), max(max_chars - 2, 16))
    head = f"- #{item.id} "
    return head + shorten(item.content, max(max_chars - len(head), 16))


def day_heading(day: date) -> str:
    """The line above a day's items: `2025-03-09:`, when they were last said or confirmed."""
    return f"{day:%Y-%m-%d}:"


def pack(ranked: list[ScoredItem], config: MemoryConfig) -> MemoryPack:
    """Apply the budgets and the overflow rule to `ranked` (best first), then lay the chosen
    items out by day, oldest first (`layout`). What a line costs counts its day's heading when
    it is the first of its day, and the budgets hold for the text as the model sees it. An
    exchange that comes in takes the place of the facts of its turn already in (it says them
    and more), and a fact that says most of its turn's exchange takes the exchange's."""
    chosen: list[ScoredItem] = []
    per_day: Counter[date] = Counter()
    used = -1  # characters of the text so far; no newline before the first line
    soft = config.soft_budget_tokens * CHARS_PER_TOKEN
    hard = config.hard_budget_tokens * CHARS_PER_TOKEN
    for scored in ranked:
        item = scored.item
        same_turn = [kept for kept in chosen if item.source and kept.item.source == item.source]
        if _said_already(item, [kept.item for kept in same_turn]):
            continue
        replaced = _replaced_by(scored, same_turn)
        left = per_day - Counter(kept.item.updated_at.date() for kept in replaced)
        after = used - sum(_line_cost(kept.item, left) for kept in replaced)
        cost = _line_cost(item, left)
        may_overflow = scored.score >= config.overflow_min_score
        if not after + cost <= soft and not (may_overflow and after + cost <= hard):
            if chosen or not may_overflow:
                continue
            # The best item alone is larger than the hard budget: it is shortened to fit.
        gone = {kept.item.id for kept in replaced}
        chosen = [kept for kept in chosen if kept.item.id not in gone] + [scored]
        per_day = left + Counter([] if item.type is ItemType.DOCUMENT else [item.updated_at.date()])
        used = after + cost
    lines = layout(chosen, hard)
    return MemoryPack(lines, chosen, estimate_tokens("\n".join(lines)) if lines else 0)


def _line_cost(item: MemoryItem, others: Counter[date]) -> int:
    """The characters `item` adds to `# Memory` beside `others` (items per day): its line, and
    its day's heading when no other item is of that day."""
    day = item.updated_at.date()
    undated = item.type is ItemType.DOCUMENT  # at the end, fenced: `bot/memory/documents.py`
    heading = 0 if undated or others[day] else len(day_heading(day)) + 1
    return heading + len(prompt_line(item)) + 1


def layout(chosen: list[ScoredItem], max_chars: int) -> list[str]:
    """The lines of `# Memory`: a heading per day, oldest day first, so that what changed
    over time reads in order; a day's items by score, best first, those the question did not
    find (the profile, relevance 0) after them, as `rank_candidates` has them (the order they
    were taken in may differ: past exchanges go in by their own ranking). Parts of shared
    documents come last, under no day: the context fences them (`memory_section`). A line
    that would pass `max_chars` (one item longer than the hard budget) is shortened to fit."""
    by_day: dict[date, list[ScoredItem]] = {}
    documents = [scored for scored in chosen if scored.item.type is ItemType.DOCUMENT]
    for scored in chosen:
        if scored.item.type is not ItemType.DOCUMENT:
            by_day.setdefault(scored.item.updated_at.date(), []).append(scored)
    lines: list[str] = []
    for day in sorted(by_day):
        heading = day_heading(day)
        lines.append(heading)
        room = min(MAX_ITEM_CHARS, max_chars - len(heading) - 1)
        best_first = sorted(by_day[day], key=lambda s: (s.relevance <= 0, -s.score))
        lines += [prompt_line(scored.item, room) for scored in best_first]
    room = min(MAX_ITEM_CHARS, max_chars)
    return lines + [prompt_line(scored.item, room) for scored in documents]


SAID_BY_FACT = 0.6
"""The share of an exchange's words a fact of the same turn must hold to stand in for it."""


def _said_already(item: MemoryItem, same_turn: list[MemoryItem]) -> bool:
    """Whether an item of the same turn already in the pack says what `item` says.

    A fact is in the user's own words of its turn, so the turn's exchange says it, unless the
    fact holds most of the exchange's words: then the fact takes the exchange's place
    (`_replaced_by`), shorter and with an id to forget it by. An exchange is said by a fact
    of its turn only when the fact holds most of its words ("my name is Marta"); "started a
    Spanish course, Tuesday nights, my accent is tragic" says more than "The user's accent is
    tragic."
    """
    if item.type is not ItemType.EXCHANGE:
        return any(
            kept.type is ItemType.EXCHANGE and not _says_most_of(item, kept) for kept in same_turn
        )
    return any(_says_most_of(kept, item) for kept in same_turn)


def _replaced_by(item: ScoredItem, same_turn: list[ScoredItem]) -> list[ScoredItem]:
    """What `item` takes the place of in the pack: an exchange, the facts of its turn already
    in (it says them and more); a fact, the exchange of its turn it says most of. Either way
    the pack ends the same, whichever of the two came first."""
    if item.item.type is ItemType.EXCHANGE:
        return same_turn
    return [
        kept
        for kept in same_turn
        if kept.item.type is ItemType.EXCHANGE and _says_most_of(item.item, kept.item)
    ]


def _says_most_of(fact: MemoryItem, exchange: MemoryItem) -> bool:
    """Whether `fact` holds `SAID_BY_FACT` of the user's words of `exchange`."""
    if fact.type is ItemType.EXCHANGE:
        return False
    said = term_set(said_and_answered(exchange.content)[0])
    return len(said & term_set(fact.content)) >= SAID_BY_FACT * len(said)
