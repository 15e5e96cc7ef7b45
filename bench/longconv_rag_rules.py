"""Choose `bot/rag/relevance.py`'s rule on dev: replay `# Relevant Memory` blocks under variants.

`python -m bench.memory_longconv --rag --dump FILE` writes each question's `# Memory` and
`# Relevant Memory` lines. This replays the relevance rule (`fresh_exchanges` as the block is
rendered, within `rag.contextMaxChars`, then `earned` against `# Memory`) on those blocks for
a grid of `ChunkRule`s and scores each as the benchmark does: evidence recall of both sections
together, and BM25's and e5 cosine's at the characters they then take. A replay, not a run:
it sees only what the dumped blocks held (best with a dump made with the rule off, whose
blocks hold the most), so the chosen rule is measured again by a real run.

    python -m bench.longconv_rag_rules FILE [--split dev|test] [--top 20]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.eval_app import eval_app
from bench.longconv_data import load_conversations
from bench.longconv_scoring import Bm25, holds, pack
from bench.memory_longconv import PlannedReplies, dated
from bot.rag.relevance import EXCHANGES_HEADING, ChunkRule, earned, fresh_exchanges

MAX_CHARS = 4000
MIN_USEFUL_LINE = 40
GRID = {
    "first": (0, 2, 4, 6, 8, 10),
    "min_shared": (1, 2, 99),
    "reply_chars": (0, 60, 120, 10_000),
    "facts": (0, 3),
}


@dataclass(frozen=True)
class Result:
    name: str
    both: float
    bm25: float
    e5: float
    chars: float
    rag_chars: float

    @property
    def margin(self) -> float:
        return self.both - max(self.bm25, self.e5)


async def rankings(rows: list[dict[str, Any]]) -> dict[str, tuple[list[str], list[str]]]:
    """Each question's user messages as BM25 and e5 cosine rank them (`baselines`' lines)."""
    conversations = {c.id: c for c in load_conversations()}
    ranked: dict[str, tuple[list[str], list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        app = eval_app(Path(tmp), PlannedReplies())
        try:
            for name in sorted({row["conversation"] for row in rows}):
                conversation = conversations[name]
                said = conversation.messages("user")
                lines = [dated(session.started, message) for session, message in said]
                texts = [message.text for _, message in said]
                bm25 = Bm25(texts)
                cosine = (await app.embedder.embed([q.text for q in conversation.questions])) @ (
                    await app.embedder.embed(texts)
                ).T
                for at, question in enumerate(conversation.questions):
                    by_words = [lines[i] for i in bm25.rank(question.text)]
                    by_meaning = [lines[i] for i in (-cosine[at]).argsort(kind="stable")]
                    ranked[question.id] = (by_words, by_meaning)
        finally:
            await app.aclose()
    return ranked


def replay(lines: list[str], question: str, memory: list[str], rule: ChunkRule) -> list[str]:
    """The block `lines` as the bot with `rule` would have rendered and trimmed it."""
    sections: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("- ") and sections:
            sections[-1][1].append(line[2:])
        elif not line.startswith("- "):
            sections.append((line, []))
    rendered: list[str] = []
    room = MAX_CHARS
    for heading, items in sections:
        if heading == EXCHANGES_HEADING:
            items = fresh_exchanges(items, rule.reply_chars)
        if not items or room < len(heading) + 1 + MIN_USEFUL_LINE:
            continue
        rendered.append(heading)
        room -= len(heading) + 1
        for item in items:
            line = f"- {item}"
            if room < min(len(line), MIN_USEFUL_LINE) + 1:
                break
            line = line if len(line) + 1 <= room else line[: room - 2] + "…"
            rendered.append(line)
            room -= len(line) + 1
    kept = earned("\n".join(rendered), question, "\n".join(memory), rule)
    return [line for line in kept.splitlines() if line]


def score(
    name: str,
    rows: list[dict[str, Any]],
    ranked: dict[str, tuple[list[str], list[str]]],
    rule: ChunkRule | None,
) -> Result:
    """`rule` None: the blocks as dumped."""
    both = bm25 = e5 = chars = rag_chars = 0.0
    for row in rows:
        rag = (
            row["relevant"]
            if rule is None
            else replay(row["relevant"], row["text"], row["memory"], rule)
        )
        lines = row["memory"] + rag
        budget = len("\n".join(lines))

        def held(context: list[str], evidence: list[str] = row["evidence"]) -> bool:
            return all(holds(context, message) for message in evidence)

        by_words, by_meaning = ranked[row["question"]]
        both += held(lines)
        bm25 += held(pack(by_words, budget))
        e5 += held(pack(by_meaning, budget))
        chars += budget
        rag_chars += len("\n".join(rag))
    n = len(rows) or 1
    return Result(name, both / n, bm25 / n, e5 / n, chars / n, rag_chars / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", type=Path)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dump.read_text().splitlines() if line.strip()]
    rows = [row for row in rows if row["split"] == args.split]
    ranked = asyncio.run(rankings(rows))
    results = [
        score(
            f"first={first} min_shared={shared} reply_chars={reply} facts={facts}",
            rows,
            ranked,
            ChunkRule(first, shared, reply, facts),
        )
        for first, shared, reply, facts in itertools.product(*GRID.values())
    ]
    results.sort(key=lambda r: (-r.margin, r.chars))
    print(f"{len(rows)} questions ({args.split}); both sections / BM25 / e5 at their characters")
    for result in [score("as dumped", rows, ranked, None), *results[: args.top]]:
        print(
            f"{result.name:<48} both {result.both:.3f}  bm25 {result.bm25:.3f}  "
            f"e5 {result.e5:.3f}  margin {result.margin:+.3f}  chars {result.chars:,.0f} "
            f"(relevant {result.rag_chars:,.0f})"
        )


if __name__ == "__main__":
    main()
