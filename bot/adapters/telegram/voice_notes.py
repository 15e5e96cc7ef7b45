"""Voice notes, audio files and video notes become the user's words.

Download (size and length checked first), decode and re-encode (`bot/audio/`: only audio
formats, on threads of their own, within a time and a size limit), transcribe
(`SpeechPort`). The transcript, labelled `[Voice note, transcribed]` (a speech model wrote it
down) and with heading-like lines escaped (`bot/untrusted.py`), is then the message's text, so
it goes through the pipeline, short-term memory and LightRAG like typed text. Anything that
stops it on the way (too large, damaged, silent, speech service down) is one `Unheard` whose
message says why: nothing is stored, and the chat is never left "typing…".
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.adapters.telegram.files import FileTooLarge, FileUnavailable, TelegramFiles, megabytes
from bot.adapters.telegram.inbound import Attachment, Inbound
from bot.audio import (
    AudioTooLarge,
    AudioTooLong,
    AudioTooSlow,
    AudioUnreadable,
    AudioWorkers,
    NoSound,
)
from bot.config import RuntimeConfigStore
from bot.config.model import TranscriptionConfig
from bot.i18n.catalogue import telegram as texts
from bot.ports.speech import SpeechError, SpeechPort
from bot.untrusted import transcribed
from bot.usage.meter import UsageMeter

log = logging.getLogger(__name__)

SOURCES = {"voice": "Voice note", "audio": "Audio file", "video_note": "Video note"}
"""How a transcript's label names what was heard: `[Voice note, transcribed]`."""
AUDIO_KINDS = frozenset(SOURCES)
HEARD_PREVIEW_CHARS = 3500
"""An "I heard" line shows this much of a transcript (one Telegram message)."""


class Unheard(Exception):
    """The attachment gave no words; the message tells the user why, in one sentence or two."""


def heard_line(transcript: str) -> str:
    """`I heard: “…”`, shortened to one message."""
    shown = transcript
    if len(shown) > HEARD_PREVIEW_CHARS:
        shown = shown[:HEARD_PREVIEW_CHARS].rstrip() + "…"
    return texts.heard(shown)


class VoiceNotes:
    """Turns an audio attachment into an `Inbound` whose text is what was said."""

    def __init__(
        self,
        files: TelegramFiles,
        speech: SpeechPort,
        config: RuntimeConfigStore,
        audio: AudioWorkers,
        meter: UsageMeter | None = None,
    ) -> None:
        """`meter`: counts what is transcribed against the sender, and refuses a sender at
        the daily budget before any download (None: not counted)."""
        self._meter = meter
        self._files = files
        self._audio = audio
        self._speech = speech
        self._config = config

    @staticmethod
    def can_read(inbound: Inbound) -> bool:
        return inbound.attachment is not None and inbound.attachment.kind in AUDIO_KINDS

    async def listen(self, inbound: Inbound) -> Inbound:
        """`inbound` with its transcript, caption first; raises `Unheard`."""
        attachment = inbound.attachment
        assert attachment is not None and attachment.kind in AUDIO_KINDS
        config = self._config.current().speech.transcription
        if not config.enabled:
            raise Unheard(texts.transcription_off(attachment.spoken))
        _check_length(attachment, config)
        who = str(inbound.user_id)
        if self._meter is not None and (refusal := await self._meter.refusal(who)):
            raise Unheard(refusal)
        try:
            data = await self._files.download(attachment)
        except (FileTooLarge, FileUnavailable) as exc:
            raise Unheard(str(exc)) from None
        transcript = await self._transcribe(attachment, data, config, who)
        heard = transcribed(SOURCES[attachment.kind], transcript)
        text = f"{inbound.text}\n\n{heard}" if inbound.text else heard
        return replace(inbound, text=text, transcript=transcript)

    async def _transcribe(
        self, attachment: Attachment, data: bytes, config: TranscriptionConfig, who: str
    ) -> str:
        kind = attachment.spoken
        try:
            clip = await self._audio.for_transcription(
                data, config.upload_format, config.max_minutes * 60
            )
        except NoSound:
            raise Unheard(texts.no_sound(kind)) from None
        except AudioUnreadable as exc:
            log.info("[Speech] a %s could not be decoded: %s", attachment.kind, exc)
            raise Unheard(texts.audio_unplayable(kind)) from None
        except AudioTooLong:
            raise Unheard(_too_long(kind, config)) from None
        except AudioTooLarge as exc:
            raise Unheard(texts.file_too_large(kind, megabytes(exc.limit_bytes))) from None
        except AudioTooSlow as exc:
            log.warning("[Speech] a %s was not decoded in time: %s", attachment.kind, exc)
            raise Unheard(texts.audio_too_slow(kind)) from None
        try:
            transcript = await self._speech.transcribe(clip, config)
        except SpeechError as exc:
            raise Unheard(texts.not_transcribed(kind, exc.reason)) from None
        if self._meter is not None:  # heard, and paid for, whatever it holds
            self._meter.transcribed(who, config.model, clip.seconds)
        if not transcript:
            raise Unheard(texts.no_words(kind))
        return transcript


def _check_length(attachment: Attachment, config: TranscriptionConfig) -> None:
    """Refuse a recording Telegram already says is too long, before downloading it."""
    if attachment.duration is not None and attachment.duration > config.max_minutes * 60:
        raise Unheard(_too_long(attachment.spoken, config))


def _too_long(kind: str, config: TranscriptionConfig) -> str:
    return texts.audio_too_long(kind, config.max_minutes)
