"""What of LightRAG's answer earns a place in `# Relevant Memory`.

LightRAG returns up to `chunk_top_k` past exchanges for any question, ranked by its own
search, and the rendered block used to fill `rag.contextMaxChars` every time: on the
long-conversation evaluation (`bench/longconv_rag.py`) it was 4,000 characters a question,
mostly exchanges that had nothing to do with it ("had the best ramen at lunch" for "Which
part of the city did we end up renting in?"), the same small talk several times over, and
assistant replies longer than the words they answered. So, on the block's items in the
server's order:

- an exchange whose user words are small talk (`bot/small_talk.py`), or repeat an exchange
  already kept, is dropped;
- of the rest not dropped below, an exchange is kept only when its words share
  `ChunkRule.min_shared` content words with the question (`ChunkRule.first` of the server's
  first ones may be kept whatever they share; none are). The server's search is semantic,
  but `# Memory` already searches the same exchanges by meaning, per user, and packs what it
  finds best; what LightRAG adds by meaning alone is what `# Memory` ranked below its room,
  on the long-conversation evaluation mostly chatter ("bit of a headache, nothing serious"
  for "walk me through our relocation");
- at most `ChunkRule.facts` related facts and entities, each sharing `min_shared` words with
  the question;
- an assistant reply is cut to `ChunkRule.reply_chars` (the user's words are what is recalled);
- an item whose user words a line of `# Memory`, or an item kept before it, already holds is
  dropped: the same words twice in one prompt cost twice. A fact's description merged from
  several documents (`<SEP>` between them) loses the parts held, and goes when none is left
  or what is left shares no word with the question.

`fresh_exchanges` runs as the block is rendered (`bot/rag/context.py`), `earned` once
`# Memory` is known (`bot/pipeline/context_building.py`).

The rule's numbers were chosen on the evaluation's dev split and measured on test
(`docs/MEMORY.md`, "Performance").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.small_talk import is_small_talk
from bot.words import content_words

STEM = 5
"""Words compare by their first five letters ("engaged" ~ "engagement")."""
HELD_SHARE = 0.6
"""A `# Memory` line holding this share of an item's user words holds the item."""
DESCRIPTION_SEPARATOR = "<SEP>"
"""Between the parts of a description LightRAG merged from several documents."""
_EXCHANGE = re.compile(
    r"^(?P<head>.*?)\bUser(?: \([^)]*\))?: (?P<user>.*?)(?: Assistant: (?P<reply>.*))?$"
)


@dataclass(frozen=True)
class ChunkRule:
    first: int = 0
    """The server's first exchanges, kept whatever words they share with the question. Chosen
    on the long-conversation dev split (`bench/longconv_rag_rules.py`, two lives, 85
    questions): 6 kept 684 characters a question and gave both sections a margin of +0.188
    over the best baseline at their characters; 0 kept 1-2 characters and +0.212. With the
    hub correction and the request rule `# Memory` found by meaning what the server did."""
    min_shared: int = 1
    """Content words a later exchange, a relation or an entity must share with the question."""
    reply_chars: int = 60
    """An assistant reply longer than this is cut (with "…"): what it said stays findable."""
    facts: int = 3
    """Related facts and entities kept at most (each sharing words with the question)."""


RULE = ChunkRule()
EXCHANGES_HEADING = "Past conversations:"
RELATIONS_HEADING = "Related facts:"
ENTITIES_HEADING = "Known entities:"
HEADINGS = (EXCHANGES_HEADING, RELATIONS_HEADING, ENTITIES_HEADING)


def stems(text: str) -> set[str]:
    """`text`'s content words, lower-cased and cut to `STEM` letters."""
    return {word.lower()[:STEM] for word in content_words(text, limit=512)}


def user_words(item: str) -> str:
    """The user's words of an exchange (`Date: … User: … Assistant: …`), else the item."""
    match = _EXCHANGE.match(item)
    return match.group("user") if match else item


def compact(item: str, reply_chars: int) -> str:
    """An exchange with its assistant reply cut to `reply_chars`; anything else unchanged."""
    match = _EXCHANGE.match(item)
    reply = match.group("reply") if match else None
    if match is None or reply is None or len(reply) <= reply_chars:
        return item
    cut = reply[: max(reply_chars - 1, 0)].rstrip()
    return f"{item[: match.start('reply')]}{cut}…" if cut else item[: match.start("reply") - 12]


def fresh_exchanges(items: Sequence[str], reply_chars: int = RULE.reply_chars) -> list[str]:
    """The exchanges (whitespace-folded, in the server's order) that are neither small talk
    nor a repeat of one before them, each with its reply cut to `reply_chars`."""
    kept: list[str] = []
    seen: set[str] = set()
    for item in items:
        words = user_words(item)
        key = " ".join(words.lower().split())
        if key not in seen and not is_small_talk(words):
            seen.add(key)
            kept.append(compact(item, reply_chars))
    return kept


def earned(context: str, question: str, memory_pack: str, rule: ChunkRule = RULE) -> str:
    """`context` (a rendered `# Relevant Memory` block) with only what earns its place for
    `question` next to `memory_pack` (`# Memory`).

    An item goes when a line of the pack, or an item kept before it, already holds its user
    words. Of the exchanges left, the first `rule.first` stay, and later ones sharing
    `rule.min_shared` content words with the question; of the facts, at most `rule.facts`
    sharing them. A heading left with no items goes too. A block `render_context` did not
    make (an answer, in the `answer` retrieval style) is returned as it is.
    """
    if context.split("\n", 1)[0] not in HEADINGS:
        return context
    asked = stems(question)
    known = [stems(line) for line in memory_pack.splitlines() if line.strip()]
    kept: list[str] = []
    heading: str | None = None
    exchanges = False
    ranked = facts = 0
    for line in context.splitlines():
        if not line.startswith("- "):
            heading, exchanges = line, line == EXCHANGES_HEADING
            continue
        item = line[2:] if exchanges else unheld_parts(line[2:], known)
        if not item or held_by(item, known):
            continue
        # What is left of a merged fact must bear on the question itself, not by its name.
        told = item if item == line[2:] else item.partition(": ")[2]
        line = f"- {item}"
        shares = len(asked & stems(user_words(told))) >= rule.min_shared
        if exchanges:
            ranked += 1
            if not (shares or ranked <= rule.first):
                continue
        else:
            if not shares or facts >= rule.facts:
                continue
            facts += 1
        if heading is not None:
            kept.append(heading)
            heading = None
        kept.append(line)
        known.append(stems(user_words(item)))
    return "\n".join(kept)


def held_by(item: str, known: Sequence[set[str]]) -> bool:
    """Whether one of `known` (each line's stems) holds `HELD_SHARE` of `item`'s user words."""
    wanted = stems(user_words(item))
    return bool(wanted) and any(len(wanted & line) >= HELD_SHARE * len(wanted) for line in known)


def unheld_parts(fact: str, known: Sequence[set[str]]) -> str:
    """`fact` (`name: description`) without the parts of its description that one of `known`
    holds; empty when none is left. A description LightRAG merged from a shared document and
    a conversation ("Document … part 1 of 1:<SEP>The alarm code is 7319.") would otherwise
    repeat the document's sentence that `# Memory` shows already."""
    name, colon, description = fact.partition(": ")
    if not colon or DESCRIPTION_SEPARATOR not in description:
        return fact
    parts = [p for p in description.split(DESCRIPTION_SEPARATOR) if not held_by(p, known)]
    return f"{name}: {DESCRIPTION_SEPARATOR.join(parts)}" if parts else ""
