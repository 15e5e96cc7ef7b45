"""The held-out memory evaluation set: everyday statements and questions asked in other words.

`bench/data/memory_eval.json` holds facts a user tells in casual chat ("btw my sister Olga
lives in Porto"), each with a question as people ask it and a paraphrase that shares no
content word with the statement after memory's own tokenizer, plus small talk that is not
worth remembering. The questions were written before any change to retrieval, so they were
not shaped to fit it, and most statements are phrased in ways the current extraction rules
do not match. Facts are split into `dev` and `test`: tune on `dev` only and report `test`,
untouched, as the held-out figure. `bench/memory_recall.py` is the older, in-sample set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "memory_eval.json"
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class EvalFact:
    id: str
    split: str
    """`dev` (tune on it) or `test` (held out: measure, never tune)."""
    category: str
    statement: str
    """What the user says, as people type it in a chat."""
    expected: str
    """A substring of `statement` alone: seen in memory, it means this fact was recalled."""
    natural: str
    """The question as people ask it; it may reuse the statement's words."""
    paraphrase: str
    """The same question sharing no token (`bot.memory.text.tokens`) with the statement."""


@dataclass(frozen=True)
class EvalSet:
    reply: str
    """What the scripted assistant answers to every statement."""
    facts: tuple[EvalFact, ...]
    small_talk: tuple[str, ...]
    """Chatter that states nothing worth remembering about the user."""

    def split(self, name: str) -> list[EvalFact]:
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; expected one of {SPLITS}")
        return [fact for fact in self.facts if fact.split == name]


def load_eval_set(path: Path = DEFAULT_PATH) -> EvalSet:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return EvalSet(
        reply=raw["reply"],
        facts=tuple(EvalFact(**fact) for fact in raw["facts"]),
        small_talk=tuple(raw["small_talk"]),
    )
