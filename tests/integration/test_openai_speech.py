"""The speech adapter with the real `openai` client against the local OpenAI-compatible server."""

import pytest

from bot.adapters.openai_speech import OpenAiSpeech
from bot.audio import for_transcription
from bot.config.model import TranscriptionConfig, VoiceRepliesConfig
from bot.ports.speech import SpeechError
from tests.fakes.audio import audio_seconds, voice_note
from tests.fakes.background_server import free_port
from tests.fakes.openai_server import FakeOpenAiServer, Transcript


@pytest.fixture
def server():
    with FakeOpenAiServer() as fake:
        yield fake


@pytest.fixture
async def speech(server):
    adapter = OpenAiSpeech("sk-speech-test", server.base_url)
    yield adapter
    await adapter.close()


CLIP = for_transcription(voice_note(1.5), "ogg", max_seconds=60)


async def test_a_clip_is_uploaded_with_model_and_language_and_its_words_come_back(speech, server):
    server.script_transcripts("  my daughter's recital is on the 14th ")
    config = TranscriptionConfig(model="whisper-large-v3", language="en")
    assert await speech.transcribe(CLIP, config) == "my daughter's recital is on the 14th"
    (upload,) = server.uploads
    assert upload.fields["model"] == "whisper-large-v3" and upload.fields["language"] == "en"
    assert upload.filename == "audio.ogg" and upload.content_type == "audio/ogg"
    assert upload.audio == CLIP.data
    assert audio_seconds(upload.audio)[2] == pytest.approx(1.5, abs=0.05)


async def test_a_passing_failure_is_retried_and_a_lasting_one_says_why(speech, server):
    server.script_transcripts(Transcript(status=503), "back again")
    config = TranscriptionConfig(retry_attempts=2)
    assert await speech.transcribe(CLIP, config) == "back again"
    server.script_transcripts(Transcript(status=503), Transcript(status=503))
    with pytest.raises(SpeechError) as failed:
        await speech.transcribe(CLIP, config)
    assert failed.value.reason == "the speech-to-text service is failing (HTTP 503)"
    server.script_transcripts(Transcript(status=404))
    with pytest.raises(SpeechError, match="HTTP 404") as failed:
        await speech.transcribe(CLIP, TranscriptionConfig(model="nope"))
    assert "does not know the model 'nope'" in failed.value.reason
    assert len(server.uploads) == 5


async def test_a_slow_service_is_cut_off_at_its_time_out(speech, server):
    server.script_transcripts(Transcript("late", delay=2.0))
    with pytest.raises(SpeechError) as failed:
        await speech.transcribe(CLIP, TranscriptionConfig(timeout_seconds=0.3, retry_attempts=1))
    assert failed.value.reason == "the speech-to-text service did not answer within 0.3 seconds"


async def test_an_unreachable_service_says_so_and_the_key_stays_out_of_the_error():
    adapter = OpenAiSpeech("sk-speech-secret", f"http://127.0.0.1:{free_port()}/v1")
    try:
        with pytest.raises(SpeechError) as failed:
            await adapter.transcribe(CLIP, TranscriptionConfig(retry_attempts=1))
    finally:
        await adapter.close()
    assert failed.value.reason == "the speech-to-text service is not reachable right now"
    assert "sk-speech-secret" not in str(failed.value) + failed.value.reason


async def test_speech_comes_back_as_audio_and_a_failure_names_the_service(speech, server):
    config = VoiceRepliesConfig(model="tts-1", voice="nova")
    audio = await speech.synthesize("Your recital is on the 14th.", config)
    assert audio_seconds(audio)[2] > 1.0
    (body,) = server.speech_requests
    assert body["input"] == "Your recital is on the 14th."
    assert (body["model"], body["voice"], body["response_format"]) == ("tts-1", "nova", "wav")
    server.speech_status = 500
    with pytest.raises(SpeechError) as failed:
        await speech.synthesize("again", config)
    assert failed.value.reason == "the speech service is failing (HTTP 500)"
