"""Audio conversions run in a bounded pool of their own, each within a size and a time limit."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from bot.audio import AudioLimits, AudioTooLarge, AudioTooSlow, AudioWorkers
from bot.ports.speech import AudioClip
from tests.fakes.audio import tone_wav, voice_note


@pytest.fixture
async def workers():
    made: list[AudioWorkers] = []

    def make(threads: int = 2, **limits: float) -> AudioWorkers:
        made.append(AudioWorkers(threads, AudioLimits(**limits)))  # type: ignore[arg-type]
        return made[-1]

    yield make
    for pool in made:
        pool.close()


def held(release: threading.Event, started: threading.Event):
    """A conversion that holds its thread until `release` is set."""

    def convert(deadline: float) -> AudioClip:
        started.set()
        release.wait()
        return AudioClip(b"", "held.ogg", "audio/ogg", 0.0)

    return convert


async def test_a_file_over_the_size_limit_is_refused_before_decoding(workers):
    audio = workers(max_bytes=1000)
    with pytest.raises(AudioTooLarge) as refused:
        await audio.for_transcription(tone_wav(1.0), "ogg", max_seconds=60)
    assert refused.value.limit_bytes == 1000


async def test_a_conversion_waiting_past_its_time_limit_is_refused(workers):
    audio = workers(threads=1, base_seconds=0.2, seconds_per_audio_minute=0)
    release, started = threading.Event(), threading.Event()
    holding = asyncio.ensure_future(audio.run(held(release, started), 10, 60))
    await asyncio.to_thread(started.wait)
    try:
        with pytest.raises(AudioTooSlow):
            await audio.for_transcription(voice_note(1.0), "ogg", max_seconds=60)
    finally:
        release.set()
    with pytest.raises(AudioTooSlow):  # the held one too: it ran past its own limit
        await holding


async def test_voice_notes_are_heard_while_the_default_executor_is_stuck(workers):
    loop = asyncio.get_running_loop()
    default = ThreadPoolExecutor(1)
    loop.set_default_executor(default)
    release, started = threading.Event(), threading.Event()
    stuck = loop.run_in_executor(None, held(release, started), 0.0)
    try:
        clip = await workers().for_transcription(voice_note(1.0), "ogg", max_seconds=60)
        assert clip.seconds == pytest.approx(1.0, abs=0.05)
        assert not stuck.done()
    finally:
        release.set()
    await stuck


async def test_the_default_executor_works_while_every_audio_thread_is_stuck(workers):
    audio = workers(threads=2, base_seconds=60)
    release, starts = threading.Event(), [threading.Event(), threading.Event()]
    holding = [asyncio.ensure_future(audio.run(held(release, s), 10, 60)) for s in starts]
    try:
        for started in starts:
            await asyncio.to_thread(started.wait)
        assert await asyncio.to_thread(lambda: "journaled") == "journaled"
    finally:
        release.set()
    await asyncio.gather(*holding)
