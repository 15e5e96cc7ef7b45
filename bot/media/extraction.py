"""The text of a PDF, DOCX, TXT or Markdown file, from its bytes, within limits.

Pure and synchronous: `MediaReader` runs it in a child process, so a hostile or huge file
costs that process its time and memory, never the bot's event loop.
"""

from __future__ import annotations

import io
import re
import zipfile

from bot.conversation.messages import clean_text
from bot.i18n.catalogue import media as texts
from bot.media.model import ExtractedText, FileKind, UnreadableFile

_BLANK_LINES = re.compile(r"\n\s*\n\s*\n+")


def extract_text(data: bytes, kind: FileKind, max_pages: int, max_chars: int) -> ExtractedText:
    """The text of `data`; raises `UnreadableFile` for a damaged, locked or binary file."""
    if kind is FileKind.PDF:
        return _pdf(data, max_pages, max_chars)
    if kind is FileKind.DOCX:
        return _limited(_docx(data), None, None, max_chars)
    if kind in (FileKind.TEXT, FileKind.MARKDOWN):
        return _limited(_plain(data), None, None, max_chars)
    raise UnreadableFile(texts.not_a_document(kind.value))


def _limited(text: str, pages: int | None, pages_read: int | None, max_chars: int) -> ExtractedText:
    text = _BLANK_LINES.sub("\n\n", clean_text(text)).strip()
    return ExtractedText(text[:max_chars], pages, pages_read, truncated=len(text) > max_chars)


def _pdf(data: bytes, max_pages: int, max_chars: int) -> ExtractedText:
    from pypdf import PdfReader  # imported here: only the child process pays for it

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile(texts.pdf_password())
        pages = len(reader.pages)
        parts: list[str] = []
        size = read = 0
        for page in reader.pages[:max_pages]:
            part = page.extract_text() or ""
            parts.append(part)
            size += len(part)
            read += 1
            if size > max_chars:
                break
    except UnreadableFile:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise UnreadableFile(texts.pdf_damaged(type(exc).__name__)) from exc
    return _limited("\n\n".join(parts), pages, read, max_chars)


def _docx(data: bytes) -> str:
    import docx  # imported here: only the child process pays for it
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError, PackageNotFoundError):
        raise UnreadableFile(texts.docx_damaged()) from None
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(lines)


def _plain(data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 with a BOM, else refused as not text."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    if "\x00" in text:
        raise UnreadableFile(texts.binary_file())
    return text
