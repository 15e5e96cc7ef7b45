"""Speech through OpenAI-compatible `/v1/audio/transcriptions` and `/v1/audio/speech`:
OpenAI, Groq, faster-whisper servers (speaches), whisper.cpp's server, vLLM, Kokoro and the
like. One client per base URL (the runtime config may name its own servers for each way);
retries follow the LLM adapter's policy; every failure leaves as a `SpeechError`.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import openai
from openai import AsyncOpenAI, DefaultAioHttpClient

from bot.adapters.openai_llm import brief_failure, openai_retrying
from bot.config.model import TranscriptionConfig, VoiceRepliesConfig
from bot.i18n.catalogue import telegram as texts
from bot.ports.speech import AudioClip, SpeechError

log = logging.getLogger(__name__)

SPEECH_RESPONSE_FORMAT: Final = "wav"
"""Asked of speech servers: every one offers it and it decodes exactly; it is re-encoded to
OGG/Opus for Telegram anyway (`bot/audio/`)."""


class OpenAiSpeech:
    """`SpeechPort` over `AsyncOpenAI.audio`."""

    def __init__(self, api_key: str | None, default_base_url: str | None) -> None:
        self._api_key = api_key
        self._default_base_url = default_base_url
        self._clients: dict[str | None, AsyncOpenAI] = {}

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()

    async def transcribe(self, clip: AudioClip, config: TranscriptionConfig) -> str:
        client = self._client(config.base_url)
        extra: dict[str, Any] = {"language": config.language} if config.language else {}
        started = time.monotonic()
        try:
            async for attempt in openai_retrying(
                config.retry_attempts, config.timeout_seconds * config.retry_attempts
            ):
                with attempt:
                    answer = await client.audio.transcriptions.create(
                        file=(clip.filename, clip.data, clip.mime_type),
                        model=config.model,
                        response_format="json",
                        timeout=config.timeout_seconds,
                        **extra,
                    )
        except openai.OpenAIError as exc:
            raise _speech_error("transcription", exc, config.model, config.timeout_seconds) from exc
        text = getattr(answer, "text", answer)
        if not isinstance(text, str):
            raise SpeechError(texts.speech_unreadable(listening=True), repr(answer))
        log.info(
            "[Speech] transcribed %.1fs of audio in %.1fs",
            clip.seconds,
            time.monotonic() - started,
        )
        return text.strip()

    async def synthesize(self, text: str, config: VoiceRepliesConfig) -> bytes:
        client = self._client(config.base_url)
        try:
            async for attempt in openai_retrying(2, config.timeout_seconds * 2):
                with attempt:
                    response = await client.audio.speech.create(
                        input=text,
                        model=config.model,
                        voice=config.voice,
                        response_format=SPEECH_RESPONSE_FORMAT,
                        timeout=config.timeout_seconds,
                    )
        except openai.OpenAIError as exc:
            raise _speech_error("speech", exc, config.model, config.timeout_seconds) from exc
        return response.content

    def _client(self, base_url: str) -> AsyncOpenAI:
        url = base_url or self._default_base_url
        if url not in self._clients:
            self._clients[url] = AsyncOpenAI(
                api_key=self._api_key or "not-needed",
                base_url=url,
                max_retries=0,
                http_client=DefaultAioHttpClient(),
            )
        return self._clients[url]


def _speech_error(
    way: str, exc: openai.OpenAIError, model: str, timeout_seconds: float
) -> SpeechError:
    """A reason users can read; the log gets what the server said (never the key)."""
    failure = brief_failure(exc)
    detail = f"{way} with {model}: {failure}: {exc}"
    log.warning("[Speech] %s failed: %s", way, detail)
    listening = way == "transcription"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        reason = texts.speech_credentials(listening)
    elif isinstance(exc, openai.NotFoundError):
        reason = texts.speech_unknown_model(listening, model)
    elif isinstance(exc, openai.RateLimitError):
        reason = texts.speech_busy(listening)
    elif failure == "connection failed":  # checked first: aiohttp calls a refusal a time-out
        reason = texts.speech_unreachable(listening)
    elif isinstance(exc, openai.APITimeoutError):
        reason = texts.speech_timed_out(listening, timeout_seconds)
    elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        reason = texts.speech_failing(listening, exc.status_code)
    elif isinstance(exc, openai.APIStatusError):
        reason = texts.speech_refused(listening, exc.status_code)
    else:
        reason = texts.speech_unreadable(listening)
    return SpeechError(reason, detail)
