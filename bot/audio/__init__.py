"""Audio re-encoding with PyAV: what users send, for speech servers; speech, for Telegram."""

from bot.audio.convert import (
    ALLOWED_CODECS,
    ALLOWED_CONTAINERS,
    AudioTooLong,
    AudioTooSlow,
    AudioUnreadable,
    NoSound,
    for_transcription,
    open_untrusted,
    to_voice_note,
)
from bot.audio.workers import AudioLimits, AudioTooLarge, AudioWorkers

__all__ = [
    "ALLOWED_CODECS",
    "ALLOWED_CONTAINERS",
    "AudioLimits",
    "AudioTooLarge",
    "AudioTooLong",
    "AudioTooSlow",
    "AudioUnreadable",
    "AudioWorkers",
    "NoSound",
    "for_transcription",
    "open_untrusted",
    "to_voice_note",
]
