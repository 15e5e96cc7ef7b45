"""LightRAG's `/query/data` answer, kept to the asking user and rendered for `# Relevant Memory`.

One server holds every user's documents and has no per-user isolation for queries. Each chunk,
entity and relation names the file source(s) it came from; only those whose sources all belong
to the asking user are kept, so nobody's past conversations reach another user's prompt.

Nor do forgotten ones: deleting a document leaves the descriptions of names it shared with
the user's other documents as they were, still naming it among their sources (the server
rebuilds them only from its extraction cache, which a memory server keeps off). So an entry
is kept only while every source it names is still in the user's index ledger (`still_held`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.rag.documents import owner_tag_of, tag
from bot.rag.relevance import (
    ENTITIES_HEADING,
    EXCHANGES_HEADING,
    RELATIONS_HEADING,
    RULE,
    fresh_exchanges,
)

SOURCE_SEPARATOR = "<SEP>"
MIN_USEFUL_LINE = 40


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    file_path: str = ""

    def sources(self) -> list[str]:
        return [s.strip() for s in self.file_path.split(SOURCE_SEPARATOR) if s.strip()]

    def belongs_to(self, owner_tag: str) -> bool:
        sources = self.sources()
        return bool(sources) and all(owner_tag_of(s) == owner_tag for s in sources)


class Chunk(_Item):
    content: str = ""


class Entity(_Item):
    entity_name: str = ""
    description: str = ""


class Relationship(_Item):
    src_id: str = ""
    tgt_id: str = ""
    description: str = ""


class QueryData(BaseModel):
    model_config = ConfigDict(extra="ignore")

    chunks: list[Chunk] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)

    def owned_by(self, owner: str) -> QueryData:
        """Only what comes wholly from `owner`'s documents."""
        owner_tag = tag(owner)
        return QueryData(
            chunks=[c for c in self.chunks if c.belongs_to(owner_tag)],
            entities=[e for e in self.entities if e.belongs_to(owner_tag)],
            relationships=[r for r in self.relationships if r.belongs_to(owner_tag)],
        )

    def sources(self) -> set[str]:
        """Every file source the answer names."""
        items: list[_Item] = [*self.chunks, *self.entities, *self.relationships]
        return {source for item in items for source in item.sources()}

    def still_held(self, held: set[str]) -> QueryData:
        """Only what comes wholly from documents in `held` (those the user still has)."""
        return QueryData(
            chunks=[c for c in self.chunks if set(c.sources()) <= held],
            entities=[e for e in self.entities if set(e.sources()) <= held],
            relationships=[r for r in self.relationships if set(r.sources()) <= held],
        )


def render_context(data: QueryData, max_chars: int, reply_chars: int = RULE.reply_chars) -> str:
    """Past exchanges first (they are the ground truth), then relations, then entities.

    Lines are whitespace-folded; exchanges that are small talk or repeats are left out and
    assistant replies cut to `reply_chars` (`bot/rag/relevance.py`). A line longer than the
    room left is cut with "…", and a section stops once less than a useful line's worth of
    room remains.
    """
    exchanges = fresh_exchanges([" ".join(c.content.split()) for c in data.chunks], reply_chars)
    sections = [
        (EXCHANGES_HEADING, exchanges),
        (
            RELATIONS_HEADING,
            [f"{r.src_id} — {r.tgt_id}: {r.description}" for r in data.relationships],
        ),
        (ENTITIES_HEADING, [f"{e.entity_name}: {e.description}" for e in data.entities]),
    ]
    lines: list[str] = []
    room = max_chars
    for heading, entries in sections:
        items = [" ".join(e.split()) for e in entries if e.strip()]
        if not items or room < len(heading) + 1 + MIN_USEFUL_LINE:
            continue
        lines.append(heading)
        room -= len(heading) + 1
        for item in items:
            line = f"- {item}"
            if room < min(len(line), MIN_USEFUL_LINE) + 1:
                break
            if len(line) + 1 > room:
                line = line[: room - 2] + "…"
            lines.append(line)
            room -= len(line) + 1
    return "\n".join(lines)
