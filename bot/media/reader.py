"""Reading a file off the event loop: text extraction and image resizing in a child process.

pypdf and python-docx are pure Python and Pillow decodes in C: in a thread either would take
the GIL from every chat, and a hostile file (a PDF that loops, a decompression bomb) could
hold it for good. A child process (`bot/media/worker.py`) with its address space capped and
a wall-clock limit (`media.readTimeoutSeconds`) costs about a tenth of a second to start and
can be killed.
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

from bot.config.model import MediaConfig
from bot.i18n import current_language
from bot.i18n.catalogue import media as texts
from bot.isolated import IsolatedFailure, IsolatedScript
from bot.media.model import ExtractedText, FileKind, PreparedImage, UnreadableFile

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("worker.py")
MEMORY_LIMIT_MB = 1024
"""Address space of one reading process: room for a large PDF, not for a bomb."""
MAX_PARALLEL_READS = 2
"""Files read at once; more wait their turn (each process takes a core)."""


class MediaReader:
    """Reads documents and shrinks images in a child process, one file per process."""

    def __init__(
        self, memory_limit_mb: int = MEMORY_LIMIT_MB, script: IsolatedScript | None = None
    ) -> None:
        """`script`: what runs the worker (`worker.py` in a child process by default; tests
        of the turn around a file hand in one that runs it in-process)."""
        self._memory_limit_mb = memory_limit_mb
        self._script = script or IsolatedScript(
            WORKER, limit_seconds=60, max_parallel=MAX_PARALLEL_READS, standard_library_only=False
        )

    async def read_document(
        self, data: bytes, kind: FileKind, limits: MediaConfig
    ) -> ExtractedText:
        """The document's text within `limits`; raises `UnreadableFile`."""
        job = {"task": "document", "kind": kind.value, "max_pages": limits.document_max_pages}
        job["max_chars"] = limits.document_max_chars
        found = await self._run(job, data, limits)
        return ExtractedText(
            text=str(found["text"]),
            pages=found["pages"],
            pages_read=found["pages_read"],
            truncated=bool(found["truncated"]),
        )

    async def prepare_image(self, data: bytes, limits: MediaConfig) -> PreparedImage:
        """The image shrunk to `media.imageMaxSide`; raises `UnreadableFile`."""
        job = {"task": "image", "max_side": limits.image_max_side}
        job["max_pixels"] = limits.image_max_pixels
        found = await self._run(job, data, limits)
        return PreparedImage(
            base64.b64decode(found["data"]),
            str(found["mime_type"]),
            found["width"],
            found["height"],
        )

    async def _run(self, job: dict[str, Any], data: bytes, limits: MediaConfig) -> dict[str, Any]:
        job["memory_mb"] = self._memory_limit_mb
        job["language"] = current_language().value  # the child's messages are the sender's
        try:
            output = await self._script.run_bytes(
                data, [json.dumps(job)], limit_seconds=limits.read_timeout_seconds
            )
        except IsolatedFailure as exc:
            log.warning("[Media] reading a %s %s", job.get("kind", "image"), exc)
            raise UnreadableFile(texts.read_stopped(limits.read_timeout_seconds)) from None
        except OSError as exc:
            log.error("[Media] could not start the reading process: %s", exc)
            raise UnreadableFile(texts.read_not_started()) from None
        try:
            found = json.loads(output)
        except ValueError:
            raise UnreadableFile(texts.read_failed()) from None
        if "error" in found:
            raise UnreadableFile(str(found["error"]))
        return dict(found)
