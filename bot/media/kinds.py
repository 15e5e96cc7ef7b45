"""What kind of file was sent: an image the model may look at, a document whose text the bot
reads, or something it cannot open. Decided from the name and the sender's MIME type only:
the bytes are judged by the reader itself, which refuses what does not parse."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from bot.i18n.catalogue import media as texts
from bot.media.model import FileKind

if TYPE_CHECKING:
    from bot.config import RuntimeConfig
    from bot.conversation import IncomingFile


DOCUMENT_KINDS = (FileKind.PDF, FileKind.DOCX, FileKind.TEXT, FileKind.MARKDOWN)
_BY_SUFFIX = {
    ".pdf": FileKind.PDF,
    ".docx": FileKind.DOCX,
    ".txt": FileKind.TEXT,
    ".text": FileKind.TEXT,
    ".log": FileKind.TEXT,
    ".csv": FileKind.TEXT,
    ".md": FileKind.MARKDOWN,
    ".markdown": FileKind.MARKDOWN,
    ".jpg": FileKind.IMAGE,
    ".jpeg": FileKind.IMAGE,
    ".png": FileKind.IMAGE,
    ".webp": FileKind.IMAGE,
    ".gif": FileKind.IMAGE,
    ".bmp": FileKind.IMAGE,
}
_BY_MIME = {
    "application/pdf": FileKind.PDF,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": FileKind.DOCX,
    "text/plain": FileKind.TEXT,
    "text/csv": FileKind.TEXT,
    "text/markdown": FileKind.MARKDOWN,
    "text/x-markdown": FileKind.MARKDOWN,
    "image/jpeg": FileKind.IMAGE,
    "image/png": FileKind.IMAGE,
    "image/webp": FileKind.IMAGE,
    "image/gif": FileKind.IMAGE,
    "image/bmp": FileKind.IMAGE,
}


def file_kind(file_name: str | None, mime_type: str | None) -> FileKind | None:
    """The kind of a file by its MIME type, else its name's suffix; None when unsupported."""
    mime = (mime_type or "").split(";", 1)[0].strip().lower()
    if mime in _BY_MIME:
        return _BY_MIME[mime]
    suffix = PurePosixPath(file_name or "").suffix.lower()
    return _BY_SUFFIX.get(suffix)


def refusal_before_reading(
    file: IncomingFile, config: RuntimeConfig, captioned: bool = False
) -> str | None:
    """What to answer a file the bot will not read, judged by its name and type alone (a
    channel asks before downloading it): an unknown type, or a photo while `llm.vision` is
    off. None when the file is worth reading. `captioned`: the file came with words, which
    the channel answers after this line, so a photo's refusal asks for no description."""
    kind = file_kind(file.file_name, file.mime_type)
    if kind is None:
        return texts.unknown_type(quoted_name(file.file_name))
    if kind is FileKind.IMAGE and not config.llm.vision:
        return texts.picture_unseen() if captioned else texts.vision_off()
    return None


def quoted_name(file_name: str) -> str:
    """A file's name as replies show it: on one line, at most 100 characters, in quotes."""
    return f"“{' '.join(file_name.split())[:100] or 'this file'}”"
