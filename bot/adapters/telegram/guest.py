"""Guest mode (Bot API 10.0): the bot answers where it is summoned but is not a member.

A user mentions the bot in a chat it has not joined; Telegram sends a `guest_message` update
with a `guest_query_id`, and the bot may post one answer there (`answerGuestQuery`). So:

- Only allowed users are answered; a stranger gets nothing, not even the refusal a private
  chat gives (it would be posted in someone else's chat), and the log keeps only their id.
- The chat is a group conversation of its own channel (`GUEST_CHANNEL`): its own session
  and group memory, never the summoner's private memory nor the session or memory of a chat
  of the same id the bot is a member of. Nothing can be delivered there later: the message
  says so (`IncomingMessage.guest`), and the reminders tool refuses to set one.
- One answer per query, sent once the turn is complete: no typing, no draft, no edited
  preview (the bot cannot act in a chat it is not in). An answer longer than one message is
  cut at a paragraph or line with a note saying so. A query Telegram refuses (expired) is
  logged; the session keeps the turn all the same.
- A redelivered update is not answered twice: the inbox drops a repeat, and after a restart
  the session knows the query (`external_id`), as for any message.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.access import AccessGate, Admission, Verdict
from bot.adapters.telegram.delivery import TelegramSender
from bot.adapters.telegram.formatting import render_markdown
from bot.adapters.telegram.handlers import ATTACHMENT_NOTE, MAX_TURN_STARTS, MessageHandlerFn
from bot.adapters.telegram.inbound import (
    GUEST_CHANNEL,
    BotIdentity,
    Inbound,
    address_of,
    attachment_of,
    without_mention,
)
from bot.adapters.telegram.splitting import TELEGRAM_TEXT_LIMIT, MessagePart, utf16_offsets
from bot.config import RuntimeConfigStore
from bot.conversation import ChatAddress, IncomingMessage, clean_text
from bot.i18n import speaking
from bot.i18n.catalogue import telegram as texts
from bot.ports.channel import DeliveryFailed, PrivateReplies, ReplyStream
from bot.ports.inbox import TelegramInbox
from bot.ports.language import LanguagePreference

log = logging.getLogger(__name__)


def read_guest(update: Update, me: BotIdentity) -> tuple[str, Inbound] | None:
    """The guest query in `update` (its id, and the message without the bot's mention), or
    None when there is none for the bot to answer."""
    message = update.guest_message
    if message is None or not message.guest_query_id:
        return None
    sender = message.from_user
    if sender is None or sender.is_bot:
        return None
    text = clean_text(message.text or message.caption or "")
    inbound = Inbound(
        address=address_of(message),
        user_id=sender.id,
        message_id=message.message_id,
        sent_at=message.date,
        text=without_mention(text, me),
        attachment=attachment_of(message),
        in_group=True,
        user_name=sender.first_name,
        language_code=sender.language_code,
    )
    return message.guest_query_id, inbound


def answer_part(text: str, limit: int = TELEGRAM_TEXT_LIMIT) -> MessagePart:
    """`text` as one formatted message: whole when it fits, else its first part (cut where a
    long reply would be split) and a note that it was cut."""
    parts = render_markdown(text, limit)
    if len(parts) == 1:
        return parts[0]
    note = f"\n\n{texts.guest_answer_cut()}"
    first = render_markdown(text, limit - utf16_offsets(note)[-1])[0]
    return MessagePart(first.text + note, first.entities)


class GuestAnswer:
    """The channel of one guest query: its first `send` is the query's one answer; anything
    sent after that is refused without a request (`DeliveryFailed`), so no retry of the core
    (its reply guarantee) can make a second answer. What is for the asker alone (`/memory`)
    goes to their private chat, as from a group."""

    name = GUEST_CHANNEL

    def __init__(self, query_id: str, sender: TelegramSender, private: PrivateReplies) -> None:
        self._query_id = query_id
        self._sender = sender
        self._private = private
        self._tried = False  # the one answer was attempted, delivered or not
        self.delivered = False
        """Telegram took the answer."""

    async def send(self, address: ChatAddress, text: str) -> None:
        """Answer the query with `text`, if it was not answered or tried before."""
        if self._tried:
            raise DeliveryFailed(f"guest query {self._query_id}: not tried twice (one answer)")
        self._tried = True
        await self._sender.answer_guest(self._query_id, answer_part(text))
        self.delivered = True

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        """None: an answer is posted once, complete."""
        return None

    async def send_privately(self, user_id: str, text: str) -> None:
        await self._private.send_privately(user_id, text)


class GuestHandler:
    """The PTB callback for `guest_message` updates: access, then one turn of the core, or
    one short answer, or nothing."""

    def __init__(
        self,
        handle: MessageHandlerFn,
        sender: TelegramSender,
        private: PrivateReplies,
        gate: AccessGate,
        config: RuntimeConfigStore,
        inbox: TelegramInbox,
        languages: LanguagePreference,
    ) -> None:
        """`gate` is the private and group chats' own: one allow-list, one rate per user.
        `private` writes to a user's private chat (the answers for their eyes only)."""
        self._handle = handle
        self._sender = sender
        self._private = private
        self._gate = gate
        self._config = config
        self._inbox = inbox
        self._languages = languages

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = context.bot  # initialised (getMe) before any update is handled
        query = read_guest(update, BotIdentity(bot.id, bot.username))
        if query is None:
            return
        query_id, inbound = query
        language = self._languages.language_for(str(inbound.user_id), inbound.language_code)
        with speaking(language):
            await self._take(update.update_id, query_id, inbound)

    async def _take(self, update_id: int, query_id: str, inbound: Inbound) -> None:
        config = self._config.current()
        admission = self._gate.admit(inbound.user_id, inbound.sent_at.timestamp(), config)
        answer = GuestAnswer(query_id, self._sender, self._private)
        if admission.verdict is not Verdict.ALLOW:
            await self._turn_away(inbound, admission, answer)
            return
        answered = self._inbox.answer_of(update_id)
        if answered is not None:  # delivered in the instant before a kill: record, not resend
            await self._run_turn(update_id, query_id, inbound, answer, answered)
            return
        if await self._inbox.count_start(update_id) > MAX_TURN_STARTS:
            log.warning("[Telegram] guest update %d was cut short too often", update_id)
            await self._say(answer, inbound, texts.gave_up())
            return
        if inbound.attachment and not inbound.text:
            await self._say(answer, inbound, texts.attachment_only(inbound.attachment.spoken))
            return
        if not inbound.text:
            await self._say(answer, inbound, texts.empty_mention())
            return
        await self._run_turn(update_id, query_id, inbound, answer)

    async def _run_turn(
        self,
        update_id: int,
        query_id: str,
        inbound: Inbound,
        answer: GuestAnswer,
        answered: str | None = None,
    ) -> None:
        """One turn of the core, answered through `answer`; a file is not fetched as a guest,
        so the model hears only that one came."""
        text = inbound.text
        if inbound.attachment:
            text += ATTACHMENT_NOTE.format(kind=inbound.attachment.spoken)
        message = IncomingMessage(
            address=inbound.address,
            user_id=str(inbound.user_id),
            text=text,
            received_at=inbound.sent_at,
            user_name=inbound.user_name,
            external_id=f"{GUEST_CHANNEL}:{query_id}",  # a redelivery is known by it
            operator=inbound.user_id in self._config.current().telegram.admin_users,
            in_group=True,
            guest=True,
            on_answered=lambda reply: self._inbox.answered(update_id, reply),
            answered_before=answered,
            language_code=inbound.language_code,
        )
        await self._handle(message, answer)  # a failed answer is logged where it failed

    async def _turn_away(self, inbound: Inbound, admission: Admission, answer: GuestAnswer) -> None:
        """A stranger gets nothing (the chat is not theirs to be told in); an allowed user
        over the rate limit is told once when to try again."""
        if admission.verdict is Verdict.REFUSE:
            # Strangers: their id and the time (in the log line's stamp), nothing else.
            log.info(
                "[Telegram] refused user %s as a guest: not in telegram.allowedUsers",
                inbound.user_id,
            )
        elif admission.verdict is Verdict.SLOW_DOWN:
            log.info(
                "[Telegram] user %s is over %d messages a minute",
                inbound.user_id,
                admission.limit_per_minute,
            )
            said = texts.slow_down(admission.limit_per_minute, admission.retry_in_seconds)
            await self._say(answer, inbound, said)

    @staticmethod
    async def _say(answer: GuestAnswer, inbound: Inbound, text: str) -> None:
        """A short answer of the bot's own; a failure is logged where the send failed."""
        try:
            await answer.send(inbound.address, text)
        except DeliveryFailed:
            return
