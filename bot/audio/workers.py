"""Audio conversions on threads of their own, each within a size and a time limit.

The event loop's default executor journals the Telegram inbox and saves sessions: a decode
that hangs there (a hostile file, a slow machine) would hold up every chat. Here at most
`threads` conversions run at once, in a pool nothing else uses; each one waits for its
thread and runs within one deadline (`AudioLimits.seconds_for`), and the conversion itself
stops at that deadline too (`convert.py` checks it between frames, and FFmpeg's interrupt
callback while it reads), so a thread is not held much past it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from bot.audio.convert import AudioTooSlow, for_transcription, to_voice_note
from bot.config.model import UploadFormat
from bot.ports.speech import AudioClip

AUDIO_THREADS = 2
"""Conversions at once; more wait their turn (each takes most of a core while it runs)."""
VOICE_REPLY_MAX_SECONDS = 3600.0
"""Speech from a speech server longer than this is not made a voice note."""


class AudioTooLarge(Exception):
    """More bytes than one conversion takes; refused before decoding."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        super().__init__(f"over {limit_bytes} bytes")


@dataclass(frozen=True)
class AudioLimits:
    """What one conversion may take: its input's size, and its time (waiting included)."""

    max_bytes: int = 100_000_000
    """Telegram's cloud Bot API hands bots at most 20 MB; a speech server's answer of 2,000
    characters is about 9 MB of WAV."""
    base_seconds: float = 10.0
    seconds_per_audio_minute: float = 1.0
    """Re-encoding a minute of audio costs about 0.2 s of a core: room for a busy machine."""

    def seconds_for(self, max_seconds: float) -> float:
        """The time allowed to convert a recording of up to `max_seconds`."""
        return self.base_seconds + self.seconds_per_audio_minute * max_seconds / 60


class AudioWorkers:
    """Converts audio in a bounded pool of its own; `close` when done."""

    def __init__(self, threads: int = AUDIO_THREADS, limits: AudioLimits | None = None) -> None:
        self.limits = limits or AudioLimits()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="audio")

    async def for_transcription(
        self, data: bytes, upload_format: UploadFormat, max_seconds: float
    ) -> AudioClip:
        """`convert.for_transcription` within the limits; raises what it raises, and
        `AudioTooLarge` or `AudioTooSlow`."""
        job = partial(for_transcription, data, upload_format, max_seconds)
        return await self.run(job, len(data), max_seconds)

    async def to_voice_note(self, data: bytes) -> AudioClip:
        """`convert.to_voice_note` within the limits."""
        job = partial(to_voice_note, data, VOICE_REPLY_MAX_SECONDS)
        return await self.run(job, len(data), VOICE_REPLY_MAX_SECONDS)

    async def run(
        self, convert: Callable[..., AudioClip], size: int, max_seconds: float
    ) -> AudioClip:
        """`convert(deadline=...)` on the pool, for an input of `size` bytes that holds up to
        `max_seconds` of sound. Raises `AudioTooLarge`, or `AudioTooSlow` at the deadline
        even while the conversion's thread is still busy."""
        if size > self.limits.max_bytes:
            raise AudioTooLarge(self.limits.max_bytes)
        seconds = self.limits.seconds_for(max_seconds)
        deadline = time.monotonic() + seconds
        job = asyncio.get_running_loop().run_in_executor(
            self._pool, partial(convert, deadline=deadline)
        )
        try:
            async with asyncio.timeout(seconds):
                return await job
        except TimeoutError:
            raise AudioTooSlow(f"not done within {seconds:g} s") from None

    def close(self) -> None:
        """Take no more work; conversions still waiting are dropped, running ones end at
        their deadline."""
        self._pool.shutdown(wait=False, cancel_futures=True)
