"""Reading a file off the event loop: text extraction and image resizing in a child process.

pypdf and python-docx are pure Python and Pillow decodes in C: in a thread either would take
the GIL from every chat, and a hostile file (a PDF that loops, a decompression bomb) could
hold it for good. A child process (`bot/media/worker.py`) with its address space capped and
a wall-clock limit (`media.readTimeoutSeconds`) and a CPU-time limit (`media.readCpuSeconds`:
a small file can cost minutes of parsing) costs about a tenth of a second to start and can be
killed. Each sender has one file read at a time, so nobody holds every slot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

from bot.config.model import MediaConfig
from bot.i18n import current_language
from bot.i18n.catalogue import media as texts
from bot.isolated import CpuLimitReached, IsolatedFailure, IsolatedScript
from bot.media.model import ExtractedText, FileKind, PreparedImage, UnreadableFile

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("worker.py")
MEMORY_LIMIT_MB = 1024
"""Address space of one reading process: room for a large PDF, not for a bomb."""
MAX_PARALLEL_READS = 2
"""Files read at once; more wait their turn (each process takes a core)."""


class ReadingProcess(Protocol):
    """Runs the reading worker (`IsolatedScript`); tests hand in one without a process."""

    async def run_bytes(
        self, data: bytes, args: list[str] | None = None, limit_seconds: float | None = None
    ) -> bytes: ...


class OnePerSender:
    """Each sender's files are read one at a time, so one sender holds at most one of the
    reading slots and the others' files do not queue behind theirs."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def turn_of(self, who: str | None) -> AsyncIterator[None]:
        if who is None:  # not a sender's file (a benchmark): no turn to wait for
            yield
            return
        lock = self._locks.setdefault(who, asyncio.Lock())
        self._waiting[who] += 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[who] -= 1
            if not self._waiting[who]:
                del self._waiting[who], self._locks[who]


class MediaReader:
    """Reads documents and shrinks images in a child process, one file per process: at
    most `MAX_PARALLEL_READS` at once, one of each sender's, each within its CPU time."""

    def __init__(
        self, memory_limit_mb: int = MEMORY_LIMIT_MB, process: ReadingProcess | None = None
    ) -> None:
        self._memory_limit_mb = memory_limit_mb
        self._process = process or IsolatedScript(
            WORKER, limit_seconds=60, max_parallel=MAX_PARALLEL_READS, standard_library_only=False
        )
        self._senders = OnePerSender()

    async def read_document(
        self, data: bytes, kind: FileKind, limits: MediaConfig, who: str | None = None
    ) -> ExtractedText:
        """The document's text within `limits`; raises `UnreadableFile`. `who` sent it."""
        job = {"task": "document", "kind": kind.value, "max_pages": limits.document_max_pages}
        job["max_chars"] = limits.document_max_chars
        found = await self._run(job, data, limits, who)
        return ExtractedText(
            text=str(found["text"]),
            pages=found["pages"],
            pages_read=found["pages_read"],
            truncated=bool(found["truncated"]),
        )

    async def prepare_image(
        self, data: bytes, limits: MediaConfig, who: str | None = None
    ) -> PreparedImage:
        """The image shrunk to `media.imageMaxSide`; raises `UnreadableFile`."""
        job = {"task": "image", "max_side": limits.image_max_side}
        job["max_pixels"] = limits.image_max_pixels
        found = await self._run(job, data, limits, who)
        return PreparedImage(
            base64.b64decode(found["data"]),
            str(found["mime_type"]),
            found["width"],
            found["height"],
        )

    async def _run(
        self, job: dict[str, Any], data: bytes, limits: MediaConfig, who: str | None
    ) -> dict[str, Any]:
        job["memory_mb"] = self._memory_limit_mb
        job["cpu_seconds"] = limits.read_cpu_seconds
        job["language"] = current_language().value  # the child's messages are the sender's
        try:
            async with self._senders.turn_of(who):
                output = await self._process.run_bytes(
                    data, [json.dumps(job)], limit_seconds=limits.read_timeout_seconds
                )
        except CpuLimitReached:
            kind = job.get("kind", "image")
            log.warning(
                "[Media] reading a %s took over %d s of CPU; refused", kind, limits.read_cpu_seconds
            )
            raise UnreadableFile(texts.too_costly(limits.read_cpu_seconds)) from None
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
