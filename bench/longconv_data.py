"""The long-conversation evaluation set (`bench/data/longconv.json`), as typed objects.

Nine conversations of one user each with the assistant, told over 15 sessions spanning
months (322-350 messages each), and 365 questions tagged with the ids of the messages that
answer them. Split by conversation: `dev` (7, 285 questions) to tune on, `test` (2, 80
questions) held out; the last four dev stories were added after the first retrieval changes
(two, then two more), to tune on more than three lives. Written by
`bench/longconv_generate.py` from the hand-written stories in `bench/longconv_stories.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "longconv.json"
SPLITS = ("dev", "test")
KINDS = ("single", "multi", "when", "open")


@dataclass(frozen=True)
class Message:
    id: str
    role: str
    """`user` or `assistant`."""
    text: str


@dataclass(frozen=True)
class Session:
    id: str
    started: datetime
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    """`single` (one message answers it), `multi` (several do), `when` (a date, from the
    session's date and the user's relative time), `open` (open-ended)."""
    text: str
    evidence: tuple[str, ...]
    """The ids of the messages that answer it."""
    answers: tuple[str, ...]
    """Each must appear in a context that answers it; `a|b` accepts either form."""


@dataclass(frozen=True)
class Conversation:
    id: str
    split: str
    user: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def messages(self, role: str | None = None) -> list[tuple[Session, Message]]:
        """Every message in order (only `role`'s when given), each with its session."""
        return [
            (session, message)
            for session in self.sessions
            for message in session.messages
            if role is None or message.role == role
        ]


def load_conversations(path: Path = DEFAULT_PATH, split: str | None = None) -> list[Conversation]:
    """The conversations of `split` (all when None)."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = [_conversation(entry) for entry in raw["conversations"]]
    return [c for c in conversations if split is None or c.split == split]


def _conversation(raw: dict[str, object]) -> Conversation:
    sessions = tuple(
        Session(
            s["id"],
            datetime.strptime(s["date"], "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC),
            tuple(Message(**m) for m in s["messages"]),
        )
        for s in raw["sessions"]  # type: ignore[attr-defined]
    )
    questions = tuple(
        Question(q["id"], q["kind"], q["question"], tuple(q["evidence"]), tuple(q["answers"]))
        for q in raw["questions"]  # type: ignore[attr-defined]
    )
    return Conversation(str(raw["id"]), str(raw["split"]), str(raw["user"]), sessions, questions)
