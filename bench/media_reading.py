"""Reading photos and documents people send, and what it costs every other chat.

A 300-page PDF, a 300-paragraph DOCX and a 24-megapixel photo are read by `MediaReader` (a
child process per file) while a probe on the event loop measures the longest pause it sees,
that is, how long any other chat would have waited. The same files read in a worker thread
(`asyncio.to_thread`) are the baseline in the same run. Both keep pauses short on a healthy
file (the interpreter switches threads every 5 ms); the child process is there for the file
that is not: it can be killed when its time is up and its memory is capped, a thread can
be neither.

Run alone: `.venv/bin/python -m bench.media_reading`.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.report import Figure, print_table
from bot.config.model import MediaConfig
from bot.media.extraction import extract_text
from bot.media.images import downscale_image
from bot.media.model import FileKind
from bot.media.reader import MediaReader
from tests.fakes.files import docx_with_paragraphs, pdf_with_text

NAME = "media_reading"
PAUSE_TARGET_MS = 50.0
PROBE_INTERVAL = 0.005


def photo(width: int = 6000, height: int = 4000) -> bytes:
    """A JPEG with detail in it (noise), as a phone camera's would have."""
    from PIL import Image

    out = io.BytesIO()
    Image.effect_noise((width, height), 60).convert("RGB").save(out, format="JPEG", quality=90)
    return out.getvalue()


def pdf(pages: int = 300) -> bytes:
    line = "Clause {n}.{k}: the tenant keeps the garden tidy and the gate closed at night."
    page = "\n".join(line.format(n="{n}", k=k) for k in range(20))
    return pdf_with_text(*(page.replace("{n}", str(n)) for n in range(pages)))


async def longest_pause(work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """(seconds `work` took, longest pause of the event loop meanwhile, in seconds)."""
    done = False
    worst = 0.0

    async def probe() -> None:
        nonlocal worst
        while not done:
            before = time.perf_counter()
            await asyncio.sleep(PROBE_INTERVAL)
            worst = max(worst, time.perf_counter() - before - PROBE_INTERVAL)

    watcher = asyncio.create_task(probe())
    started = time.perf_counter()
    await work()
    took = time.perf_counter() - started
    done = True
    await watcher
    return took, worst


def run() -> list[Figure]:
    return asyncio.run(_run())


async def _run() -> list[Figure]:
    limits = MediaConfig()
    reader = MediaReader()
    files: dict[str, tuple[bytes, Callable[[bytes], Awaitable[Any]], Callable[[bytes], Any]]] = {
        "pdf 300 pages": (
            pdf(),
            lambda data: reader.read_document(data, FileKind.PDF, limits),
            lambda data: extract_text(data, FileKind.PDF, 300, 300_000),
        ),
        "docx 300 paragraphs": (
            docx_with_paragraphs(*(f"Paragraph {n}: " + "words " * 40 for n in range(300))),
            lambda data: reader.read_document(data, FileKind.DOCX, limits),
            lambda data: extract_text(data, FileKind.DOCX, 300, 300_000),
        ),
        "photo 24 MP": (
            photo(),
            lambda data: reader.prepare_image(data, limits),
            lambda data: downscale_image(data, 1024, 50_000_000),
        ),
    }
    figures = []
    for label, (data, in_child, in_thread) in files.items():
        took, pause = await longest_pause(lambda: in_child(data))  # noqa: B023
        _, thread_pause = await longest_pause(lambda: asyncio.to_thread(in_thread, data))  # noqa: B023
        figures += [
            Figure(NAME, f"{label}: read in a child process", took * 1000, "ms", "—"),
            Figure(
                NAME,
                f"{label}: longest loop pause (thread: {thread_pause * 1000:.0f} ms)",
                pause * 1000,
                "ms",
                f"≤ {PAUSE_TARGET_MS:g} ms",
                pause * 1000 <= PAUSE_TARGET_MS,
            ),
        ]
    return figures


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    print_table(run())
