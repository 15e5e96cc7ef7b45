"""Speech both ways: audio to the user's words, and an answer to audio.

The Telegram channel turns voice notes into text with `transcribe` and, when asked, speaks
answers with `synthesize`; the core never sees audio, only the transcript, which is the
user's message like any typed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.config.model import TranscriptionConfig, VoiceRepliesConfig


@dataclass(frozen=True)
class AudioClip:
    """Audio ready to upload: the bytes and the file name and type servers judge them by."""

    data: bytes
    filename: str
    mime_type: str
    seconds: float


class SpeechError(Exception):
    """No transcript or no speech this time. `reason` completes a sentence for users
    ("I could not transcribe this voice note: <reason>"); the message is for the log."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class SpeechPort(Protocol):
    async def transcribe(self, clip: AudioClip, config: TranscriptionConfig) -> str:
        """The words said in `clip` (may be empty: silence). Raises `SpeechError`."""
        ...

    async def synthesize(self, text: str, config: VoiceRepliesConfig) -> bytes:
        """`text` spoken, as audio in whatever format the server sends. Raises `SpeechError`."""
        ...
