"""Spoken answers: `/voice on` in a chat, or by default to a voice note.

The answer goes out as text first, as always; then it is spoken through `/v1/audio/speech`,
re-encoded to OGG/Opus with PyAV (`bot/audio/`, the format Telegram shows as a voice bubble)
and sent with sendVoice. Speaking is an extra: when it fails the text answer stands, the log
says why and the chat gets one short line saying there is no voice this time.

Each chat's choice (`/voice on|off|auto`) is one entry of `<data dir>/telegram/voice-replies.json`,
rewritten atomically on change.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bot.adapters.telegram.delivery import TelegramSender
from bot.adapters.telegram.formatting import render_markdown
from bot.adapters.telegram.inbound import Inbound
from bot.audio import AudioTooLarge, AudioTooLong, AudioTooSlow, AudioUnreadable, AudioWorkers
from bot.commands import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.conversation import ChatAddress
from bot.i18n.catalogue import commands as texts
from bot.i18n.catalogue import telegram as say
from bot.ports.channel import DeliveryFailed
from bot.ports.speech import SpeechError, SpeechPort
from bot.storage.choices import ChoiceStore, KeyedChoices

log = logging.getLogger(__name__)

_SPOKEN_LIMIT = 1_000_000  # render_markdown splits at this; the text is not sent as a message


class VoiceSwitch:
    """Per-chat choice: True (always speak), False (never), absent (speak to voice notes)."""

    def __init__(self, path: Path | None, store: ChoiceStore[bool] | None = None) -> None:
        """`path` None: choices last until the bot stops (tests); `store`: where they live
        instead (PostgreSQL)."""
        self.path = path
        self._choices = store or KeyedChoices(path, "chats", bool, "[Telegram] /voice")

    def choice(self, address: ChatAddress) -> bool | None:
        return self._choices.get(address.session_key)

    async def choose(self, address: ChatAddress, choice: bool | None) -> bool:
        """Record a chat's choice; False when the disk refused it (nothing changes then)."""
        return await self._choices.choose(address.session_key, choice)


class VoiceReplies:
    """Decides whether an answer is spoken, and speaks it."""

    def __init__(
        self,
        speech: SpeechPort,
        sender: TelegramSender,
        config: RuntimeConfigStore,
        switch: VoiceSwitch,
        audio: AudioWorkers,
    ) -> None:
        self._speech = speech
        self._audio = audio
        self._sender = sender
        self._config = config
        self._switch = switch

    def wanted(self, inbound: Inbound) -> bool:
        """Spoken when set up and the chat said `/voice on`, or to a voice note unless it
        said `/voice off`."""
        replies = self._config.current().speech.voice_replies
        if not replies.enabled:
            return False
        chosen = self._switch.choice(inbound.address)
        if chosen is not None:
            return chosen
        return replies.answer_voice_notes and inbound.transcript is not None

    async def speak(self, address: ChatAddress, markdown: str, reply_to: int | None) -> None:
        """Send `markdown` as a voice note after its text; never raises for a failure."""
        config = self._config.current().speech.voice_replies
        text = "".join(part.text for part in render_markdown(markdown, _SPOKEN_LIMIT)).strip()
        if not text:
            return
        if len(text) > config.max_chars:
            log.info("[Speech] an answer of %d characters stays text only", len(text))
            return
        await self._sender.typing(address, "record_voice")
        try:
            audio = await self._speech.synthesize(text, config)
            clip = await self._audio.to_voice_note(audio)
        except SpeechError as exc:
            await self._say_no_voice(address, exc.reason, reply_to)
            return
        except (AudioUnreadable, AudioTooLong, AudioTooLarge, AudioTooSlow) as exc:
            log.warning("[Speech] the speech service sent audio I could not convert: %s", exc)
            await self._say_no_voice(address, say.unplayable_speech(), reply_to)
            return
        try:
            await self._sender.send_voice(address, clip.data, clip.seconds, reply_to)
        except DeliveryFailed:
            pass  # logged by the sender; the text answer is there

    async def _say_no_voice(self, address: ChatAddress, reason: str, reply_to: int | None) -> None:
        for part in render_markdown(say.no_voice_this_time(reason)):
            try:
                await self._sender.send(address, part, reply_to=reply_to)
            except DeliveryFailed:
                return


class VoiceCommand:
    """`/voice on|off|auto`: this chat's spoken answers."""

    def __init__(self, switch: VoiceSwitch, config: RuntimeConfigStore) -> None:
        self._switch = switch
        self._config = config

    def register(self, registry: CommandRegistry) -> None:
        if registry.get("voice") is None:
            registry.register(Command("voice", texts.about_voice.say(), self.run))

    async def run(self, call: CommandCall) -> str:
        if not self._config.current().speech.voice_replies.enabled:
            return texts.voice_not_set_up()
        address = call.message.address
        choices: dict[str, bool | None] = {"on": True, "off": False, "auto": None}
        word = call.args.lower()
        if word not in choices:
            return _describe(self._switch.choice(address))
        if not await self._switch.choose(address, choices[word]):
            return texts.choice_not_saved()
        return _describe(choices[word])


def _describe(choice: bool | None) -> str:
    return texts.voice_state("auto" if choice is None else "on" if choice else "off")
