"""Media's own types: what kind a file is, the text read from a document, an image made ready
for the model, and the refusal of an unreadable file. The port (`bot/ports/media.py`) and
the readers import them from here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FileKind(StrEnum):
    """What the bot makes of a file: an image to look at, or a document to read."""

    IMAGE = "image"
    PDF = "pdf"
    DOCX = "docx"
    TEXT = "text"
    MARKDOWN = "markdown"


class UnreadableFile(Exception):
    """The file could not be read; the message says why, in words for the sender."""


@dataclass(frozen=True)
class ExtractedText:
    """What was read: the text, and how much of the file it covers."""

    text: str
    pages: int | None
    """Pages in the file (PDF only)."""
    pages_read: int | None
    """Pages read: fewer than `pages` when `max_pages` stopped the reading."""
    truncated: bool
    """The text was cut at `max_chars`."""


@dataclass(frozen=True)
class PreparedImage:
    """An image ready for the model: its bytes, their type and its size in pixels."""

    data: bytes
    mime_type: str
    width: int
    height: int
