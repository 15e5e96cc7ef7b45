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

What users send is hostile until decoded. FFmpeg would otherwise guess among all of its
demuxers, some of which open network connections themselves (an SDP text opens RTP listeners
on ports it names, and waits on them): only the demuxers and decoders a voice note or an
audio file can need are allowed (`ALLOWED_CONTAINERS`, `ALLOWED_CODECS`), no protocol at all
(the bytes are read from memory), and each conversion stops at its `deadline`.

These are CPU-bound (re-encoding a minute of audio costs about 0.2 s, checking it 0.05 s):
`AudioWorkers` (`workers.py`) runs them on threads of their own, which is enough because
FFmpeg's work runs without the GIL: re-encoding ten minutes of audio (1.4 s) paused the event
loop for at most 4 ms. Unlike `bot/media/`, no child process: its start (Python and PyAV's
import, about 0.2 s) would cost more than a voice note's conversion. PyAV is imported with the
first conversion, not with the bot: FFmpeg's libraries are some 15 MB of a process that may
never see a voice note.
"""

from __future__ import annotations

import io
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.config.model import UploadFormat
from bot.ports.speech import AudioClip

if TYPE_CHECKING:
    import av

TRANSCRIPTION_RATE = 16_000
"""What speech recognisers work at; more only makes the upload larger."""
TRANSCRIPTION_OPUS_BITS = 24_000
VOICE_NOTE_RATE = 48_000
VOICE_NOTE_OPUS_BITS = 32_000
MIN_SECONDS = 0.1
"""Shorter than this is no speech at all."""

ALLOWED_CONTAINERS = ("ogg", "mp3", "mov", "wav", "flac", "aac")
"""FFmpeg demuxers: OGG (voice notes), MP3, MP4/M4A (`mov`; also video notes), WAV, FLAC,
ADTS AAC: what Telegram clients send as voice and audio, and what speech servers answer."""
# fmt: off
ALLOWED_CODECS = (
    "opus", "vorbis", "mp3", "aac", "flac", "alac",
    "pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le",
)
# fmt: on
"""Sound tracks decoded (by their codec's name); any other is refused unplayed."""
_DECODERS = (*ALLOWED_CODECS, "mp3float")  # FFmpeg's own name of its MP3 decoder
_INPUT_OPTIONS = {
    "format_whitelist": ",".join(ALLOWED_CONTAINERS),
    "codec_whitelist": ",".join(_DECODERS),
    # Nothing to open but the bytes in memory: any URL a demuxer finds inside is refused.
    "protocol_whitelist": "none",
}


class AudioUnreadable(Exception):
    """Not audio PyAV can decode: damaged, or a format it does not know."""


class NoSound(AudioUnreadable):
    """A file that decodes but holds no audio, or too little to say anything."""


class AudioTooLong(Exception):
    """Longer than allowed; found while decoding (Telegram's stated duration can be wrong)."""


class AudioTooSlow(Exception):
    """The conversion passed its deadline and was stopped."""


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


def for_transcription(
    data: bytes, upload_format: UploadFormat, max_seconds: float, deadline: float = math.inf
) -> AudioClip:
    """`data` (any audio, or a video with sound) as a small mono file for a speech server.

    An OGG/Opus voice note, what Telegram clients record, goes as it is when OGG is asked
    for: it is decoded only to be checked and measured (about a tenth of the cost).
    `deadline` is a `time.monotonic()` value. Raises `AudioUnreadable`, `NoSound`,
    `AudioTooLong` or `AudioTooSlow`.
    """
    target = _FORMATS[upload_format]
    return _convert(data, target, max_seconds, deadline, keep_opus=upload_format == "ogg")


def to_voice_note(
    data: bytes, max_seconds: float = 3600.0, deadline: float = math.inf
) -> AudioClip:
    """Speech from a speech server (WAV, MP3, Opus...) as OGG/Opus for Telegram's sendVoice."""
    return _convert(data, _VOICE_NOTE, max_seconds, deadline, keep_opus=False)


def open_untrusted(data: bytes, deadline: float = math.inf) -> av.container.InputContainer:
    """`data` opened for decoding by the allowed demuxers and decoders only, from memory.

    Raises `AudioUnreadable` (a format or sound track not allowed, or damaged), `NoSound`
    or `AudioTooSlow`."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise AudioTooSlow("out of time before it started")
    timeout = None if remaining == math.inf else remaining
    import av

    try:
        source = av.open(io.BytesIO(data), "r", container_options=_INPUT_OPTIONS, timeout=timeout)
    except av.FFmpegError as exc:
        raise _failure(exc, deadline) from exc
    if not source.streams.audio:
        source.close()
        raise NoSound("no audio track")
    codec = source.streams.audio[0].codec_context
    if codec is None or codec.codec.canonical_name not in ALLOWED_CODECS:
        source.close()
        raise AudioUnreadable("a sound track in a format not allowed")
    return source


def _convert(
    data: bytes, target: _Encoding, max_seconds: float, deadline: float, keep_opus: bool
) -> AudioClip:
    if not data:
        raise NoSound("the file is empty")
    import av

    out = io.BytesIO()
    try:
        with open_untrusted(data, deadline) as source:
            stream = source.streams.audio[0]
            limits = _Limits(max_seconds, deadline)
            if keep_opus and source.format.name == "ogg" and stream.codec_context.name == "opus":
                seconds = _measure(source, stream, limits)
                out = io.BytesIO(data)
            else:
                with av.open(out, mode="w", format=target.container) as sink:
                    seconds = _copy(source, stream, sink, target, limits)
    except av.FFmpegError as exc:
        raise _failure(exc, deadline) from exc
    if seconds < MIN_SECONDS:
        raise NoSound(f"{seconds:.2f} s of audio")
    return AudioClip(out.getvalue(), target.filename, target.mime_type, seconds)


def _failure(exc: av.FFmpegError, deadline: float) -> Exception:
    """FFmpeg's error, or the deadline when FFmpeg stopped because it had passed."""
    if time.monotonic() >= deadline:
        return AudioTooSlow("stopped at its deadline")
    return AudioUnreadable(str(exc))


@dataclass(frozen=True)
class _Limits:
    max_seconds: float
    deadline: float

    def check(self, samples: int, rate: int) -> None:
        """Raise when `samples` at `rate` is past the length, or the time is up."""
        if samples > self.max_seconds * rate:
            raise AudioTooLong(f"more than {self.max_seconds:g} s")
        if time.monotonic() > self.deadline:
            raise AudioTooSlow("stopped at its deadline")


def _measure(source: av.container.InputContainer, stream: av.AudioStream, limits: _Limits) -> float:
    """Decode without re-encoding: seconds of sound, and proof that it decodes."""
    samples = 0
    for frame in source.decode(stream):
        samples += frame.samples
        limits.check(samples, stream.rate)
    return samples / stream.rate


def _copy(
    source: av.container.InputContainer,
    stream: av.AudioStream,
    sink: av.container.OutputContainer,
    target: _Encoding,
    limits: _Limits,
) -> float:
    """Decode, resample to mono at the target rate, encode; the seconds written."""
    import av
    from av.audio.resampler import AudioResampler

    encoder = sink.add_stream(target.codec, rate=target.rate, layout="mono", options=target.options)
    assert isinstance(encoder, av.AudioStream)
    if target.bit_rate:
        encoder.bit_rate = target.bit_rate
    resampler = AudioResampler(format=encoder.format, layout="mono", rate=target.rate)
    samples = 0
    for frame in source.decode(stream):
        for mono in resampler.resample(frame):
            samples += mono.samples
            limits.check(samples, target.rate)
            sink.mux(encoder.encode(mono))
    for mono in resampler.resample(None):
        samples += mono.samples
        sink.mux(encoder.encode(mono))
    sink.mux(encoder.encode(None))
    return samples / target.rate
