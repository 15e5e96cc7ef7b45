"""Audio re-encoding with PyAV: what users send, for speech servers; speech, for Telegram."""

from bot.audio.convert import (
    AudioTooLong,
    AudioUnreadable,
    NoSound,
    for_transcription,
    to_voice_note,
)

__all__ = ["AudioTooLong", "AudioUnreadable", "NoSound", "for_transcription", "to_voice_note"]
