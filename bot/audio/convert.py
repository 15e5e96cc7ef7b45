"""Audio re-encoded with PyAV (`av` on PyPI), whose wheels bundle FFmpeg's libraries, so no
`ffmpeg` binary is needed on the machine.

Users send voice notes (OGG/Opus), audio files (MP3, M4A, FLAC, WAV...) and video notes
(MP4); speech servers differ in what they take. Everything is decoded and re-encoded to one
small format before upload: OGG/Opus at 16 kHz mono (a few KB a second, so even long notes
stay under OpenAI's 25 MB), or 16 kHz PCM WAV for servers that take nothing else
(whisper.cpp's). A voice note that is OGG/Opus already goes as it is, decoded only to be
checked. Decoding tells a damaged or empty file from a good one before any speech server is
asked. The other way, speech servers' audio becomes OGG/Opus at 48 kHz, the format Telegram
shows as a voice bubble.

These are CPU-bound (re-encoding a minute of audio costs about 0.2 s, checking it 0.05 s):
callers run them in a thread, which is enough because FFmpeg's work runs without the GIL:
re-encoding ten minutes of audio (1.4 s) paused the event loop for at most 4 ms. Unlike
`bot/media/`, no child process: its start would cost more than a voice note's conversion.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import av
from av.audio.resampler import AudioResampler

from bot.config.model import UploadFormat
from bot.ports.speech import AudioClip

TRANSCRIPTION_RATE = 16_000
"""What speech recognisers work at; more only makes the upload larger."""
TRANSCRIPTION_OPUS_BITS = 24_000
VOICE_NOTE_RATE = 48_000
VOICE_NOTE_OPUS_BITS = 32_000
MIN_SECONDS = 0.1
"""Shorter than this is no speech at all."""


class AudioUnreadable(Exception):
    """Not audio PyAV can decode: damaged, or a format it does not know."""


class NoSound(AudioUnreadable):
    """A file that decodes but holds no audio, or too little to say anything."""


class AudioTooLong(Exception):
    """Longer than allowed; found while decoding (Telegram's stated duration can be wrong)."""


@dataclass(frozen=True)
class _Encoding:
    container: str
    codec: str
    rate: int
    bit_rate: int | None
    filename: str
    mime_type: str
    options: dict[str, str] = field(default_factory=dict)


# libopus at compression level 5 encodes in about half the time of its default 10, with no
# difference a speech recogniser or a listener on a phone would notice.
_OPUS_SPEED = {"compression_level": "5"}
_FORMATS = {
    "ogg": _Encoding(
        "ogg",
        "libopus",
        TRANSCRIPTION_RATE,
        TRANSCRIPTION_OPUS_BITS,
        "audio.ogg",
        "audio/ogg",
        _OPUS_SPEED,
    ),
    "wav": _Encoding("wav", "pcm_s16le", TRANSCRIPTION_RATE, None, "audio.wav", "audio/wav"),
}
_VOICE_NOTE = _Encoding(
    "ogg", "libopus", VOICE_NOTE_RATE, VOICE_NOTE_OPUS_BITS, "voice.ogg", "audio/ogg", _OPUS_SPEED
)


def for_transcription(data: bytes, upload_format: UploadFormat, max_seconds: float) -> AudioClip:
    """`data` (any audio, or a video with sound) as a small mono file for a speech server.

    An OGG/Opus voice note, what Telegram clients record, goes as it is when OGG is asked
    for: it is decoded only to be checked and measured (about a tenth of the cost).
    Raises `AudioUnreadable`, `NoSound` or `AudioTooLong`.
    """
    target = _FORMATS[upload_format]
    return _convert(data, target, max_seconds, keep_opus=upload_format == "ogg")


def to_voice_note(data: bytes, max_seconds: float = 3600.0) -> AudioClip:
    """Speech from a speech server (WAV, MP3, Opus...) as OGG/Opus for Telegram's sendVoice."""
    return _convert(data, _VOICE_NOTE, max_seconds, keep_opus=False)


def _convert(data: bytes, target: _Encoding, max_seconds: float, keep_opus: bool) -> AudioClip:
    if not data:
        raise NoSound("the file is empty")
    out = io.BytesIO()
    try:
        with av.open(io.BytesIO(data), mode="r") as source:
            if not source.streams.audio:
                raise NoSound("no audio track")
            stream = source.streams.audio[0]
            if keep_opus and source.format.name == "ogg" and stream.codec_context.name == "opus":
                seconds = _measure(source, stream, max_seconds)
                out = io.BytesIO(data)
            else:
                with av.open(out, mode="w", format=target.container) as sink:
                    seconds = _copy(source, stream, sink, target, max_seconds)
    except av.FFmpegError as exc:
        raise AudioUnreadable(str(exc)) from exc
    if seconds < MIN_SECONDS:
        raise NoSound(f"{seconds:.2f} s of audio")
    return AudioClip(out.getvalue(), target.filename, target.mime_type, seconds)


def _measure(
    source: av.container.InputContainer, stream: av.AudioStream, max_seconds: float
) -> float:
    """Decode without re-encoding: seconds of sound, and proof that it decodes."""
    samples = 0
    for frame in source.decode(stream):
        samples += frame.samples
        if samples > max_seconds * stream.rate:
            raise AudioTooLong(f"more than {max_seconds:g} s")
    return samples / stream.rate


def _copy(
    source: av.container.InputContainer,
    stream: av.AudioStream,
    sink: av.container.OutputContainer,
    target: _Encoding,
    max_seconds: float,
) -> float:
    """Decode, resample to mono at the target rate, encode; the seconds written."""
    encoder = sink.add_stream(target.codec, rate=target.rate, layout="mono", options=target.options)
    assert isinstance(encoder, av.AudioStream)
    if target.bit_rate:
        encoder.bit_rate = target.bit_rate
    resampler = AudioResampler(format=encoder.format, layout="mono", rate=target.rate)
    limit = max_seconds * target.rate
    samples = 0
    for frame in source.decode(stream):
        for mono in resampler.resample(frame):
            samples += mono.samples
            if samples > limit:
                raise AudioTooLong(f"more than {max_seconds:g} s")
            sink.mux(encoder.encode(mono))
    for mono in resampler.resample(None):
        samples += mono.samples
        sink.mux(encoder.encode(mono))
    sink.mux(encoder.encode(None))
    return samples / target.rate
