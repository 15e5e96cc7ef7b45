"""Reading what people send: a document's text, an image small enough for the model."""

from __future__ import annotations

from typing import Protocol

from bot.config.model import MediaConfig
from bot.media.model import ExtractedText, FileKind, PreparedImage


class MediaReaderPort(Protocol):
    async def read_document(
        self, data: bytes, kind: FileKind, limits: MediaConfig, who: str | None = None
    ) -> ExtractedText:
        """The text of a PDF, DOCX, TXT or Markdown file within `limits`, read without
        blocking the event loop; raises `UnreadableFile` with a message for the sender.
        `who` sent it: one sender's files are read one at a time."""
        ...

    async def prepare_image(
        self, data: bytes, limits: MediaConfig, who: str | None = None
    ) -> PreparedImage:
        """The image shrunk to `limits.image_max_side`; raises `UnreadableFile`."""
        ...
