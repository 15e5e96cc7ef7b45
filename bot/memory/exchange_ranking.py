"""How past exchanges rank among themselves for their top-k (`episode_choice`).

A long life holds hundreds of exchanges, each in the user's own words, and the ones a question
needs are often far down by cosine; recency and priors would let a fresh line of chatter push
out the older message a question is about. So exchanges make their `episodicTopK` by their
ranks among the exchanges in meaning and in words, fused, with two kinds counting less by
meaning: short ones past the nearest few, and requests to the assistant anywhere.
`bot/memory/scoring.py` then places them among the other items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.memory.episodes import item_text
from bot.memory.model import Layer, MemoryItem
from bot.memory.text import term_set

EPISODE_RRF_K = 60
"""Rank fusion's damping for past exchanges: large, so that a question spanning several
messages gets the ones that rank well both ways, not just the first by either. Tuned on the
long-conversation dev split (3: 0.77, 60: 0.78 evidence recall at 16 exchanges)."""

EPISODE_WORD_WEIGHT = 0.3
"""How much the word ranking counts against the meaning ranking for past exchanges: e5's
cosine over the user's words finds most paraphrases; shared rare words ("Fernhill",
"Lisbon") settle what it ranks close. Tuned on the long-conversation dev split (0: 0.73,
0.3: 0.78, 1.0: 0.75 evidence recall at 16 exchanges)."""

SHORT_TERMS = 5
SHORT_WEIGHT = 0.5
SHORT_FROM = 8
"""When exchanges compete for their top-k, one whose user words hold fewer than
`SHORT_TERMS` distinct content words ("had the best ramen at lunch") and that is not among
the `SHORT_FROM` nearest counts `SHORT_WEIGHT` in the meaning ranking: the vector of a
short, plain text sits close to every question, so its being fairly near says less than it
does of a message with more to say. The nearest keep their full weight ("I can't have
gluten, celiac" for "which ingredient is off limits in my diet?": counting it less there
lost it on the personal-facts dev split); by words every exchange counts fully ("Leila got
engaged" for "who got engaged?"). Tuned on the long-conversation dev split, 40 exchanges
in `# Memory` by day: fewer than 4 terms 0.90 evidence recall, 5 or 6 0.94; weight 0.3 or
0.5 0.94, 0.7 0.93; from the 4th place 0.95 (one question; the 8th kept, the personal-facts
split's reason above)."""

REQUEST = re.compile(
    r"^(?:how|what|what's|why|which|where|who|whose|is|are|can|could|should|would|do|does|"
    r"any (?:tips|ideas|advice|suggestions)|как|почему|зачем|где|какой|какая|какое|какие|кто|"
    r"сколько|посоветуй\w*|подскажи\w*|(?:можно|стоит|есть) ли)\b",
    re.IGNORECASE,
)
"""How a request to the assistant opens ("how do I stop procrastinating", "any tips for
falling asleep faster?"). Such an exchange says what the user wanted to know then, seldom
what is true of them, and its vector shares the question's form with every question, so its
meaning rank counts `SHORT_WEIGHT` wherever it stands: "any tips for falling asleep
faster?" was the 6th nearest to "what have I been doing to fill my time since I retired?".
By words it counts fully ("what book did you recommend?" finds "can you recommend a good
book?"). Not "when" or "did", which open statements as often ("did the half marathon this
morning"). Chosen on the long-conversation dev split (five lives, evidence recall at 600 /
300 tokens): 0.932 / 0.785 without, 0.946 / 0.800 with it; personal facts unchanged."""


def episode_choice(
    lexical: dict[str, float], semantic: dict[str, float], items: Mapping[str, MemoryItem]
) -> dict[str, float]:
    """How past exchanges rank for a place in their top-k: by their ranks among the exchanges
    in meaning and in words, fused (reciprocal rank fusion weighted by `EPISODE_WORD_WEIGHT`,
    damped by `EPISODE_RRF_K`, scaled so that first both ways is 1.0). Every word match takes
    a rank: an exchange is the user's own words, and a rare word it shares with the question
    is worth its rank however little of the question it covers. Past the `SHORT_FROM`
    nearest, a short exchange's meaning rank counts `SHORT_WEIGHT`, and a request's
    (`REQUEST`) anywhere.

    Empty without vectors (`semantic` empty): exchanges then compete on their score."""
    if not semantic:
        return {}
    episodes = {
        item_id
        for item_id in (*lexical, *semantic)
        if (item := items.get(item_id)) is not None and item.layer is Layer.EPISODIC
    }
    fused: dict[str, float] = {}
    by_meaning = _ranked({i: semantic[i] for i in episodes if i in semantic})
    for position, item_id in enumerate(by_meaning, start=1):
        item = items[item_id]
        weak = _is_request(item) or (position > SHORT_FROM and _is_short(item))
        fused[item_id] = (SHORT_WEIGHT if weak else 1.0) / (EPISODE_RRF_K + position)
    by_words = _ranked({i: lexical[i] for i in episodes if i in lexical})
    for position, item_id in enumerate(by_words, start=1):
        fused[item_id] = fused.get(item_id, 0.0) + EPISODE_WORD_WEIGHT / (EPISODE_RRF_K + position)
    ceiling = (1 + EPISODE_WORD_WEIGHT) / (EPISODE_RRF_K + 1)
    return {item_id: value / ceiling for item_id, value in fused.items()}


def _ranked(values: dict[str, float]) -> list[str]:
    """Ids best first; ties in id order, so that both stores rank them alike."""
    return sorted(values, key=lambda item_id: (-values[item_id], item_id))


def _is_short(item: MemoryItem) -> bool:
    """Whether the user's words of an exchange hold fewer than `SHORT_TERMS` content words."""
    return len(term_set(item_text(item))) < SHORT_TERMS


def _is_request(item: MemoryItem) -> bool:
    """Whether the user's words of an exchange ask the assistant for something (`REQUEST`)."""
    return REQUEST.match(item_text(item).lstrip()) is not None
