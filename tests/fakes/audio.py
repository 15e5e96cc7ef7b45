"""Real audio made in the tests: a WAV tone with the stdlib, OGG/Opus voice notes and MP4
video notes with PyAV (the library the bot converts with)."""

from __future__ import annotations

import contextlib
import io
import math
import os
import struct
import threading
import wave
from fractions import Fraction
from pathlib import Path

import av

from bot.audio import to_voice_note


def tone_wav(seconds: float, rate: int = 16_000, frequency: float = 440.0) -> bytes:
    """A mono 16-bit WAV of a sine tone: real audio any decoder reads, made with the stdlib."""
    samples = int(seconds * rate)
    frames = struct.pack(
        f"<{samples}h",
        *(int(8000 * math.sin(2 * math.pi * frequency * i / rate)) for i in range(samples)),
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return buffer.getvalue()


def voice_note(seconds: float) -> bytes:
    """An OGG/Opus voice note, as Telegram clients record them."""
    return to_voice_note(tone_wav(seconds)).data


def video_note(seconds: float, rate: int = 44_100) -> bytes:
    """An MP4 with a small video track and an AAC sound track, like a Telegram video note."""
    out = io.BytesIO()
    with av.open(out, mode="w", format="mp4") as container:
        video = container.add_stream("mpeg4", rate=10)
        video.width = video.height = 64
        video.pix_fmt = "yuv420p"
        sound = container.add_stream("aac", rate=rate, layout="mono")
        assert isinstance(sound, av.AudioStream) and isinstance(video, av.VideoStream)
        for index in range(int(seconds * 10)):
            frame = av.VideoFrame(64, 64, "yuv420p")
            for plane in frame.planes:
                plane.update(bytes(plane.buffer_size))
            frame.pts = index
            container.mux(video.encode(frame))
        container.mux(video.encode(None))
        with av.open(io.BytesIO(tone_wav(seconds, rate))) as source:
            resampler = av.AudioResampler(format=sound.format, layout="mono", rate=rate)
            for frame in source.decode(audio=0):
                for chunk in resampler.resample(frame):
                    chunk.time_base = Fraction(1, rate)
                    container.mux(sound.encode(chunk))
        container.mux(sound.encode(None))
    return out.getvalue()


def audio_seconds(data: bytes) -> tuple[str, str, float]:
    """Container, codec and length of `data`, as a decoder sees them."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return container.format.name, stream.codec_context.name, samples / stream.rate


def sdp_note(port: int, host: str = "127.0.0.1") -> bytes:
    """A hostile "voice note": a session description that tells FFmpeg's SDP demuxer to
    listen for RTP on `host`:`port` (and to wait there for packets)."""
    lines = ["v=0", f"o=- 0 0 IN IP4 {host}", "s=call", f"c=IN IP4 {host}", "t=0 0"]
    lines.append(f"m=audio {port} RTP/AVP 0")
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


def audio_in(container: str, codec: str, seconds: float = 1.0, rate: int = 16_000) -> bytes:
    """A mono tone in any container and codec FFmpeg can write."""
    out = io.BytesIO()
    with av.open(out, mode="w", format=container) as sink:
        stream = sink.add_stream(codec, rate=rate, layout="mono")
        assert isinstance(stream, av.AudioStream)
        with av.open(io.BytesIO(tone_wav(seconds, rate))) as source:
            resampler = av.AudioResampler(format=stream.format, layout="mono", rate=rate)
            for frame in source.decode(audio=0):
                for chunk in resampler.resample(frame):
                    sink.mux(stream.encode(chunk))
        sink.mux(stream.encode(None))
    return out.getvalue()


def udp_sockets(pid: int | str = "self") -> set[int]:
    """Inodes of the UDP sockets process `pid` holds open (IPv4 and IPv6)."""
    process = Path("/proc") / str(pid)
    mine = set()
    for fd in (process / "fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                mine.add(int(target[8:-1]))
    udp = set()
    for table in ("udp", "udp6"):
        with contextlib.suppress(OSError):
            for line in (process / "net" / table).read_text().splitlines()[1:]:
                udp.add(int(line.split()[9]))
    return mine & udp


class UdpWatch:
    """Samples process `pid`'s UDP sockets on a thread until stopped: every new one seen."""

    def __init__(self, pid: int | str = "self", every: float = 0.005) -> None:
        """`every`: seconds between samples."""
        self.seen: set[int] = set()
        self._pid = pid
        self._every = every
        self._before = udp_sockets(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> UdpWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self._every):
            self.seen |= udp_sockets(self._pid) - self._before
