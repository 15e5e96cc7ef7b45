"""The PTB callback for every update: filter, check access, then hand the message to the core."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.access import AccessGate, Admission, Verdict
from bot.adapters.telegram.channel import (
    TelegramChannel,
    keep_previews_in_this_turn,
    reply_to_in_this_turn,
)
from bot.adapters.telegram.delivery import TelegramSender
from bot.adapters.telegram.files import FileTooLarge, FileUnavailable, TelegramFiles
from bot.adapters.telegram.formatting import plain_parts
from bot.adapters.telegram.inbound import BotIdentity, Inbound, read_update
from bot.adapters.telegram.shared_files import download, is_shared_file, labelled, shared_file
from bot.adapters.telegram.typing_indicator import TypingIndicators
from bot.adapters.telegram.voice_notes import Unheard, VoiceNotes, heard_line
from bot.adapters.telegram.voice_replies import VoiceReplies
from bot.commands import parse_command
from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.conversation import IncomingFile, IncomingMessage
from bot.i18n import speaking
from bot.i18n.catalogue import telegram as texts
from bot.media.kinds import refusal_before_reading
from bot.ports.channel import ChannelPort, DeliveryFailed
from bot.ports.inbox import TelegramInbox
from bot.ports.language import LanguagePreference

log = logging.getLogger(__name__)

MessageHandlerFn = Callable[[IncomingMessage, ChannelPort], Awaitable[None]]

ATTACHMENT_NOTE = "\n\n(Attached: a {kind}, which the bot cannot open.)"
"""For the model, in the message's text: the model answers in the user's words."""
MAX_TURN_STARTS = 2
"""A message whose turn was cut short (crash, kill, shutdown) this often is not tried again."""


class TelegramUpdateHandler:
    """Turns an update into a turn of the core, or into a short reply, or into nothing."""

    def __init__(
        self,
        handle: MessageHandlerFn,
        channel: TelegramChannel,
        sender: TelegramSender,
        typing: TypingIndicators,
        gate: AccessGate,
        config: RuntimeConfigStore,
        *,
        inbox: TelegramInbox,
        files: TelegramFiles,
        voice_notes: VoiceNotes,
        voice_replies: VoiceReplies,
        languages: LanguagePreference,
    ) -> None:
        """`inbox` counts a turn's starts, and keeps a streamed reply's preview ids and its
        delivered answer with its update, for a replay to delete or record; `files`
        downloads photos and documents for the core to read (`shared_files.py`);
        `voice_notes` transcribes voice notes, audio and video notes; `voice_replies`
        speaks answers where wanted; `languages` is each user's `/language`."""
        self._handle = handle
        self._channel = channel
        self._sender = sender
        self._typing = typing
        self._gate = gate
        self._config = config
        self._inbox = inbox
        self._files = files
        self._voice_notes = voice_notes
        self._voice_replies = voice_replies
        self._languages = languages
        self.me: BotIdentity | None = None
        """Set once getMe has answered, before the first update arrives."""

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert self.me is not None, "the bot identity is set at start-up"
        config = self._config.current()
        inbound = read_update(update, self.me, config.telegram.require_mention_in_groups)
        if inbound is None:
            return
        language = self._languages.language_for(str(inbound.user_id), inbound.language_code)
        with speaking(language):  # what this channel says itself, too
            await self._take(update, inbound, config)

    async def _take(self, update: Update, inbound: Inbound, config: RuntimeConfig) -> None:
        admission = self._gate.admit(inbound.user_id, inbound.sent_at.timestamp(), config)
        if admission.verdict is not Verdict.ALLOW:
            await self._turn_away(inbound, admission)
            return
        operator = inbound.user_id in config.telegram.admin_users
        answered = self._inbox.answer_of(update.update_id)
        if answered is not None:  # delivered in the instant before a kill: record, not resend
            await self._run_turn(inbound, operator, update.update_id, answered)
            return
        await self._delete_leftover_preview(update.update_id, inbound)
        if await self._failed_before(update.update_id):
            await self._reply(inbound, texts.gave_up())
            return  # handled: the inbox marks it done
        if is_shared_file(inbound.attachment):
            await self._run_file_turn(inbound, operator, update.update_id)
            return
        if self._voice_notes.can_read(inbound):
            heard = await self._listen(inbound)
            if heard is None:
                return
            inbound = heard
        if inbound.attachment and not inbound.text:
            await self._reply(inbound, texts.attachment_only(inbound.attachment.spoken))
            return
        if not inbound.text:
            await self._reply(inbound, texts.empty_mention())
            return
        await self._run_turn(inbound, operator, update.update_id)

    async def _delete_leftover_preview(self, update_id: int, inbound: Inbound) -> None:
        """A replay after a kill mid-stream: delete the half-written preview, so the answer
        about to be given is the only one in the chat."""
        leftover = self._inbox.leftover_preview(update_id)
        for message_id in leftover:
            await self._sender.delete(inbound.address, message_id)
        if leftover:
            log.info("[Telegram] deleted the unfinished preview of update %d", update_id)
            self._inbox.preview_shown(update_id, [])

    async def _listen(self, inbound: Inbound) -> Inbound | None:
        """Transcribe an audio attachment, "typing…" meanwhile; None when the user was told
        why it gave no words (the indicator stops then, whatever went wrong)."""
        assert inbound.attachment is not None
        self._typing.start(inbound.address)
        heard, failure = None, texts.unheard()
        try:
            heard = await self._voice_notes.listen(inbound)
        except Unheard as exc:
            failure = str(exc)
        except Exception:
            log.exception("[Telegram] listening to a %s failed", inbound.attachment.kind)
        finally:
            if heard is None:  # told why below, or cancelled: no "typing…" left behind
                self._typing.stop(inbound.address)
        if heard is None:
            await self._reply(inbound, failure)
            return None
        if heard.transcript and self._config.current().speech.transcription.show_transcript:
            await self._reply(inbound, heard_line(heard.transcript))
        return heard

    async def _failed_before(self, update_id: int) -> bool:
        """Count this start; True when the update's turn was cut short too often already."""
        starts = await self._inbox.count_start(update_id)
        if starts <= MAX_TURN_STARTS:
            return False
        log.warning(
            "[Telegram] update %d was cut short %d times (crash, kill or shutdown mid-turn); "
            "answered with an apology instead of trying again",
            update_id,
            starts - 1,
        )
        return True

    async def _run_file_turn(self, inbound: Inbound, operator: bool, update_id: int) -> None:
        """Download a photo or document, then run the turn with it. What will not be read (an
        unknown type, a photo while `llm.vision` is off) or is over the size limit is refused
        before any download; a refusal or a failed download is said, not run. A caption is
        words all the same: after a refusal the turn runs on the caption alone."""
        assert inbound.attachment is not None
        captioned = bool(inbound.text.strip())
        file = shared_file(inbound.attachment)
        refusal = refusal_before_reading(file, self._config.current(), captioned)
        if refusal is not None:  # no download for a file that will not be read
            await self._reply(inbound, refusal)
            if captioned:
                await self._run_turn(inbound, operator, update_id, readable=False)
            return
        self._typing.start(inbound.address)
        try:
            shared = await download(self._files, inbound.attachment)
        except (FileTooLarge, FileUnavailable) as exc:
            self._typing.stop(inbound.address)
            await self._reply(inbound, str(exc))
            return
        await self._run_turn(inbound, operator, update_id, file=shared)

    async def _run_turn(
        self,
        inbound: Inbound,
        operator: bool,
        update_id: int,
        answered: str | None = None,
        file: IncomingFile | None = None,
        readable: bool = True,
    ) -> None:
        """`readable`: False when the attachment was refused and only its caption is run."""
        inbox = self._inbox
        text = inbound.text
        if readable and inbound.attachment and is_shared_file(inbound.attachment):
            text = labelled(inbound.attachment, text)
        elif inbound.attachment and inbound.transcript is None:
            text += ATTACHMENT_NOTE.format(kind=inbound.attachment.spoken)
        voice = self._voice_replies
        speak = answered is None and voice.wanted(inbound)
        spoken: list[str] = []

        def on_answered(reply: str) -> None:
            inbox.answered(update_id, reply)
            if speak:
                spoken.append(reply)

        message = IncomingMessage(
            address=inbound.address,
            user_id=str(inbound.user_id),
            text=text,
            received_at=inbound.sent_at,
            user_name=inbound.user_name,
            external_id=f"telegram:{inbound.address.chat_id}:{inbound.message_id}",
            operator=operator,
            in_group=inbound.in_group,
            on_answered=on_answered,
            answered_before=answered,
            file=file,
            language_code=inbound.language_code,
        )
        reply_to = inbound.message_id if inbound.in_group else None
        reply_to_in_this_turn(inbound.address, reply_to)
        keep_previews_in_this_turn(lambda ids: inbox.preview_shown(update_id, ids))
        if parse_command(message) is None and answered is None:
            self._typing.start(inbound.address)
        try:
            await self._handle(message, self._channel)
        finally:
            self._typing.stop(inbound.address)
        if spoken:
            await voice.speak(inbound.address, spoken[-1], reply_to)

    async def _turn_away(self, inbound: Inbound, admission: Admission) -> None:
        if admission.verdict is Verdict.REFUSE:
            # Strangers: their id and the time (in the log line's stamp), nothing else.
            log.info("[Telegram] refused user %s: not in telegram.allowedUsers", inbound.user_id)
            await self._reply(inbound, texts.stranger_refused(inbound.user_id))
        elif admission.verdict is Verdict.SLOW_DOWN:
            log.info(
                "[Telegram] user %s is over %d messages a minute",
                inbound.user_id,
                admission.limit_per_minute,
            )
            await self._reply(
                inbound,
                texts.slow_down(admission.limit_per_minute, admission.retry_in_seconds),
            )

    async def _reply(self, inbound: Inbound, text: str) -> None:
        reply_to = inbound.message_id if inbound.in_group else None
        try:
            for part in plain_parts(text):
                await self._sender.send(inbound.address, part, reply_to=reply_to)
        except DeliveryFailed as exc:
            log.warning("[Telegram] could not answer user %s: %s", inbound.user_id, exc)
