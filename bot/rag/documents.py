"""Conversation exchanges, and pieces of documents people share, as LightRAG documents.

A document's `file_source` keeps the spec's `conv_YYYYMMDD_HHmmss` form and adds its owner,
its chat and a random suffix: the server answers 409 to a repeated name and keeps only the
basename, and the owner tag is what lets retrieval keep each user's memories to that user.
A shared document's pieces are named `doc_…` the same way, but end in a digest of the piece
instead of a random suffix: filing the same message again (the inbox replays it after a
crash) names every piece as before, so the index worker knows the ones already sent.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime

from bot.rag.model import RagDocument

CONVERSATION_PREFIX = "conv_"
"""How the name of an exchange's document begins (a shared document's pieces: `doc_`)."""
_SOURCE = re.compile(r"^(?:conv|doc)_\d{8}_\d{6}_u([A-Za-z0-9]+)_c([A-Za-z0-9]+)_([a-z0-9]+)\.txt$")


def exchange_document(
    owner: str,
    chat_key: str,
    user_text: str,
    assistant_text: str,
    at: datetime,
    skill: str | None = None,
    speaker: str | None = None,
) -> RagDocument:
    """One exchange as a document to index. `owner` is the memory scope (a user id, or
    `group:…`); `speaker`, in a group, the member who wrote `user_text`."""
    return RagDocument(
        owner=owner,
        chat_key=chat_key,
        file_source=file_source_for(at, owner, chat_key),
        text=format_exchange(user_text, assistant_text, at, skill, speaker),
        created_at=at,
    )


def shared_file_piece(
    owner: str, chat_key: str, header: str, text: str, at: datetime
) -> RagDocument:
    """One piece of a document someone shared, under a `doc_…` name carrying the same owner
    and chat tags as an exchange, so isolation, the ledger and `/forget` apply. The name is
    the same each time the same piece of the same message is filed (`header` names the
    file and the part)."""
    body = f"{header}\n{text}"
    digest = hashlib.sha256("\0".join((owner, chat_key, at.isoformat(), body)).encode())
    return RagDocument(
        owner=owner,
        chat_key=chat_key,
        file_source=f"doc_{at:%Y%m%d_%H%M%S}_u{tag(owner)}_c{tag(chat_key)}_"
        f"{digest.hexdigest()[:20]}.txt",
        text=body,
        created_at=at,
    )


def shared_pieces_prefix(owner: str, at: datetime) -> str:
    """How the names of every piece of the document `owner` shared at `at` begin."""
    return f"doc_{at:%Y%m%d_%H%M%S}_u{tag(owner)}_"


def named_by_content(document: RagDocument) -> bool:
    """Whether `document` is a shared document's piece, whose name a replay makes again
    (an exchange's name is random: it never repeats)."""
    return document.file_source.startswith("doc_")


def distinct(document: RagDocument) -> RagDocument:
    """The same exchange under a new name, with a `Participant:` line naming its owner.

    LightRAG ids a document by its text and refuses a second identical one. When two users'
    exchanges read the same, this makes the second one its own document.
    """
    return document.model_copy(
        update={
            "file_source": file_source_for(
                document.created_at,
                document.owner,
                document.chat_key,
                prefix=document.file_source.split("_", 1)[0],
            ),
            "text": f"{document.text}\nParticipant: {tag(document.owner)}",
        }
    )


def format_exchange(
    user_text: str,
    assistant_text: str,
    at: datetime,
    skill: str | None,
    speaker: str | None = None,
) -> str:
    """`Date:`, optional `Skill:`, `User:`, `Assistant:` lines, as the spec lays out; in a
    group `User (Anna):` says which member wrote."""
    lines = [f"Date: {at:%Y-%m-%d %H:%M}"]
    if skill:
        lines.append(f"Skill: {skill}")
    user = f"User ({speaker})" if speaker else "User"
    lines += [f"{user}: {user_text}", f"Assistant: {assistant_text}"]
    return "\n".join(lines)


def file_source_for(at: datetime, owner: str, chat_key: str, prefix: str = "conv") -> str:
    """`conv_20260207_143000_u42_c1001_k3x9...txt`: unique, and naming owner and chat; a
    shared document's pieces begin `doc_`."""
    nonce = secrets.token_hex(5)
    return f"{prefix}_{at:%Y%m%d_%H%M%S}_u{tag(owner)}_c{tag(chat_key)}_{nonce}.txt"


def owner_tag_of(file_source: str) -> str | None:
    """The owner tag a file source carries, or None for a name the bot did not make."""
    match = _SOURCE.match(file_source.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def tag(value: str) -> str:
    """`value` itself when it is plain letters and digits, else a stable hash of it.

    Telegram user ids are digits and stay readable; anything else (a chat key with colons or
    a minus sign) becomes `h` + 16 hex digits, so tags never collide and never hold `_`.
    """
    if value.isascii() and value.isalnum():
        return value
    return "h" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
