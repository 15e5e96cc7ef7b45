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
from bot.memory.model import TRAITS, Layer, MemoryItem, ScoredItem

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


def pack(ranked: list[ScoredItem], config: MemoryConfig) -> MemoryPack:
    """Apply the budgets and the overflow rule to `ranked` (best first)."""
    lines: list[str] = []
    chosen: list[ScoredItem] = []
    used = 0
    sources: set[str] = set()
    for scored in ranked:
        item = scored.item
        if item.layer is Layer.EPISODIC and item.source and item.source in sources:
            continue
        line = render_line(item)
        cost = estimate_tokens(line)
        fits_soft = used + cost <= config.soft_budget_tokens
        may_overflow = scored.score >= config.overflow_min_score
        if not fits_soft and not (may_overflow and used + cost <= config.hard_budget_tokens):
            if chosen or not may_overflow:
                continue
            # The best item alone is larger than the hard budget: shorten it to fit.
            line = render_line(item, config.hard_budget_tokens * CHARS_PER_TOKEN - CHARS_PER_TOKEN)
            cost = estimate_tokens(line)
        lines.append(line)
        chosen.append(scored)
        used += cost
        if item.source:
            sources.add(item.source)
    return MemoryPack(lines, chosen, used)
