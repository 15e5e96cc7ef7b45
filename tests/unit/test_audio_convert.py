"""Audio re-encoding with PyAV: what users send becomes one small format; speech, a voice note."""

import time

import pytest

from bot.audio import (
    AudioTooLong,
    AudioTooSlow,
    AudioUnreadable,
    NoSound,
    for_transcription,
    open_untrusted,
    to_voice_note,
)
from tests.fakes.audio import (
    UdpWatch,
    audio_in,
    audio_seconds,
    sdp_note,
    tone_wav,
    video_note,
    voice_note,
)
from tests.fakes.background_server import free_port


@pytest.mark.parametrize(
    ("source", "seconds"),
    [(voice_note(2.0), 2.0), (tone_wav(1.5, rate=44_100), 1.5), (video_note(1.0), 1.0)],
    ids=["voice note", "wav", "video note"],
)
def test_any_audio_becomes_small_mono_opus_for_a_speech_server(source, seconds):
    clip = for_transcription(source, "ogg", max_seconds=60)
    assert (clip.filename, clip.mime_type) == ("audio.ogg", "audio/ogg")
    container, codec, length = audio_seconds(clip.data)
    assert (container, codec) == ("ogg", "opus")
    assert clip.seconds == pytest.approx(seconds, abs=0.05)
    assert length == pytest.approx(seconds, abs=0.05)


def test_an_opus_voice_note_goes_as_it_is_and_anything_else_is_re_encoded():
    note = voice_note(2.0)
    assert for_transcription(note, "ogg", max_seconds=60).data == note
    wav = tone_wav(2.0)
    assert for_transcription(wav, "ogg", max_seconds=60).data[:4] == b"OggS"
    with pytest.raises(AudioTooLong):
        for_transcription(note, "ogg", max_seconds=1.0)


def test_wav_uploads_are_16_khz_pcm():
    clip = for_transcription(voice_note(1.0), "wav", max_seconds=60)
    assert (clip.filename, clip.mime_type) == ("audio.wav", "audio/wav")
    assert clip.data[:4] == b"RIFF" and int.from_bytes(clip.data[24:28], "little") == 16_000
    assert audio_seconds(clip.data)[2] == pytest.approx(1.0, abs=0.05)


def test_speech_becomes_an_ogg_opus_voice_note_at_48_khz():
    clip = to_voice_note(tone_wav(2.0))
    assert audio_seconds(clip.data)[:2] == ("ogg", "opus")
    assert clip.seconds == pytest.approx(2.0, abs=0.05)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", NoSound),
        (tone_wav(0.0), NoSound),
        (b"OggS" + bytes(200), AudioUnreadable),
        (b"not audio at all " * 50, AudioUnreadable),
        (voice_note(2.0)[:60], AudioUnreadable),  # cut off in its headers
    ],
    ids=["empty file", "no samples", "damaged ogg", "text", "truncated"],
)
def test_empty_and_damaged_files_are_told_apart(data, error):
    with pytest.raises(error):
        for_transcription(data, "ogg", max_seconds=60)


def test_decoding_stops_past_the_length_limit():
    with pytest.raises(AudioTooLong):
        for_transcription(tone_wav(3.0), "ogg", max_seconds=1.0)


@pytest.mark.parametrize(
    ("container", "codec"),
    [
        *[("mp3", "mp3"), ("flac", "flac"), ("adts", "aac"), ("ipod", "aac"), ("ipod", "alac")],
        *[("wav", "pcm_u8"), ("wav", "pcm_s24le"), ("wav", "pcm_f32le")],
    ],
)
def test_the_formats_telegram_sends_are_allowed(container, codec):
    clip = for_transcription(audio_in(container, codec), "ogg", max_seconds=60)
    assert clip.seconds == pytest.approx(1.0, abs=0.1)


def test_an_sdp_note_is_refused_unopened_and_no_socket_is_made():
    with UdpWatch() as watch, pytest.raises(AudioUnreadable) as refused:
        for_transcription(sdp_note(free_port()), "ogg", max_seconds=60)
    assert type(refused.value) is AudioUnreadable  # not NoSound: it was never opened
    assert watch.seen == set()


@pytest.mark.parametrize(
    ("container", "codec"),
    [("au", "pcm_s16be"), ("aiff", "pcm_s16be"), ("matroska", "flac"), ("wav", "adpcm_ms")],
)
def test_other_containers_and_codecs_are_refused_before_decoding(container, codec):
    with pytest.raises(AudioUnreadable) as refused:
        open_untrusted(audio_in(container, codec))
    assert type(refused.value) is AudioUnreadable


def test_a_conversion_past_its_deadline_stops():
    with pytest.raises(AudioTooSlow):
        for_transcription(tone_wav(3.0), "ogg", max_seconds=60, deadline=time.monotonic())
