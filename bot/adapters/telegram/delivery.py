"""Sending, editing and deleting messages: retries, the plain-text fallback, readable failures.

Every Telegram error is handled here, so the channel and the stream above deal in three
outcomes only: done, the message is gone (edit), or `DeliveryFailed`. Network errors and 5xx
answers are retried (`TELEGRAM_RETRY`); flood waits are retried by `FloodControl` underneath.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from telegram import (
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    ReplyParameters,
    SentGuestMessage,
)
from telegram import MessageEntity as TelegramEntity
from telegram.constants import ChatAction
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TelegramError
from telegram.ext import ExtBot

from bot.adapters.telegram.flood_control import FloodControl
from bot.adapters.telegram.formatting import without_formatting
from bot.adapters.telegram.splitting import MessagePart
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed
from bot.retry import RetryPolicy

log = logging.getLogger(__name__)

T = TypeVar("T")
NO_FLOOD_RETRY = 0
"""`rate_limit_args` for requests better skipped than sent late (previews, typing)."""


class DraftsUnavailable(DeliveryFailed):
    """The Bot API server refused `sendMessageDraft` (it lacks the method, or not here)."""


def chat_id(address: ChatAddress) -> int:
    return int(address.chat_id)


def thread_id(address: ChatAddress) -> int | None:
    return int(address.thread_id) if address.thread_id else None


def _chat(address: ChatAddress) -> str:
    """The chat, as failures name it in the log."""
    return f"chat {address.chat_id}"


def _is_transient(error: BaseException) -> bool:
    """Network trouble and 5xx answers (PTB raises both as NetworkError; BadRequest is final)."""
    return isinstance(error, NetworkError) and not isinstance(error, BadRequest)


TELEGRAM_RETRY = RetryPolicy(
    "[Telegram]", _is_transient, first_wait_seconds=0.5, max_wait_seconds=8, jitter=False
)
"""A Bot API request: network errors and 5xx, 4 tries, 0.5 s doubling (floods: `FloodControl`)."""


def _rejects_entities(error: BadRequest) -> bool:
    text = error.message.lower()
    return "entit" in text or "can't parse" in text


def _is_not_modified(error: BadRequest) -> bool:
    return "message is not modified" in error.message.lower()


def _is_gone(error: BadRequest) -> bool:
    text = error.message.lower()
    return "message to edit not found" in text or "message can't be edited" in text


def _entities(part: MessagePart) -> list[TelegramEntity] | None:
    if not part.entities:
        return None
    return [
        TelegramEntity(
            type=e.type,
            offset=e.offset,
            length=e.length,
            url=e.url,
            language=e.language,
            custom_emoji_id=e.custom_emoji_id,
        )
        for e in part.entities
    ]


class TelegramSender:
    """Delivers message parts through a PTB `Bot`, never letting a Telegram error escape."""

    def __init__(self, bot: ExtBot[Any], retry: RetryPolicy = TELEGRAM_RETRY) -> None:
        self._bot = bot
        self._retry = retry
        self._once = retry.limited(attempts=1)

    async def send(
        self,
        address: ChatAddress,
        part: MessagePart,
        reply_to: int | None = None,
        preview: bool = False,
    ) -> int:
        """Send `part`; its message id. A preview is tried once, a reply until retries run out."""

        async def attempt(shown: MessagePart) -> Message:
            return await self._bot.send_message(
                chat_id=chat_id(address),
                text=shown.text,
                entities=_entities(shown),
                message_thread_id=thread_id(address),
                reply_parameters=(
                    ReplyParameters(reply_to, allow_sending_without_reply=True)
                    if reply_to
                    else None
                ),
                rate_limit_args=NO_FLOOD_RETRY if preview else None,
            )

        message = await self._formatted_or_plain(
            "sendMessage", _chat(address), part, attempt, preview
        )
        return message.message_id

    async def answer_guest(self, query_id: str, part: MessagePart) -> str:
        """Post `part` as the one answer to a guest query (`answerGuestQuery`, Bot API 10.0);
        the posted message's inline message id. Telegram takes one answer per query and
        refuses an expired one (400): a network error or a 5xx is retried, as a second
        answer of a query that got the first is refused, never posted twice."""

        async def attempt(shown: MessagePart) -> SentGuestMessage:
            content = InputTextMessageContent(shown.text, entities=_entities(shown))
            article = InlineQueryResultArticle("answer", "Answer", content)
            return await self._bot.answer_guest_query(query_id, article)

        target = f"guest query {query_id}"
        sent = await self._formatted_or_plain("answerGuestQuery", target, part, attempt, False)
        return sent.inline_message_id

    async def send_voice(
        self, address: ChatAddress, ogg_opus: bytes, seconds: float, reply_to: int | None = None
    ) -> int:
        """Send a voice note (OGG/Opus, shown as a voice bubble); its message id."""
        try:
            message = await self._retrying(
                lambda: self._bot.send_voice(
                    chat_id=chat_id(address),
                    voice=ogg_opus,
                    filename="voice.ogg",
                    duration=max(1, round(seconds)),
                    message_thread_id=thread_id(address),
                    reply_parameters=(
                        ReplyParameters(reply_to, allow_sending_without_reply=True)
                        if reply_to
                        else None
                    ),
                )
            )
        except TelegramError as exc:
            log.warning("[Telegram] sendVoice to chat %s failed: %s", address.chat_id, exc)
            raise DeliveryFailed(f"sendVoice to chat {address.chat_id} failed: {exc}") from exc
        return message.message_id

    async def edit(
        self, address: ChatAddress, message_id: int, part: MessagePart, preview: bool = False
    ) -> bool:
        """Show `part` in message `message_id`; False when that message is gone."""

        async def attempt(shown: MessagePart) -> bool:
            try:
                await self._bot.edit_message_text(
                    text=shown.text,
                    chat_id=chat_id(address),
                    message_id=message_id,
                    entities=_entities(shown),
                    rate_limit_args=NO_FLOOD_RETRY if preview else None,
                )
            except BadRequest as exc:
                if _is_not_modified(exc):
                    return True
                if _is_gone(exc):
                    log.info("[Telegram] message %s to edit is gone", message_id)
                    return False
                raise
            return True

        return await self._formatted_or_plain(
            "editMessageText", _chat(address), part, attempt, preview
        )

    async def draft(self, address: ChatAddress, draft_id: int, part: MessagePart) -> None:
        """Show `part` as the private chat's draft of the reply (`sendMessageDraft`): tried
        once, never waiting out a flood. Raises `DraftsUnavailable` when the server refuses
        drafts (PTB reports a missing method's 404 as `InvalidToken`), else `DeliveryFailed`."""

        async def attempt(shown: MessagePart) -> bool:
            return await self._bot.send_message_draft(
                chat_id=chat_id(address),
                draft_id=draft_id,
                text=shown.text,
                entities=_entities(shown),
                message_thread_id=thread_id(address),
                rate_limit_args=NO_FLOOD_RETRY,
            )

        try:
            await self._formatted_or_plain("sendMessageDraft", _chat(address), part, attempt, True)
        except DeliveryFailed as exc:
            if isinstance(exc.__cause__, InvalidToken | BadRequest | Forbidden):
                raise DraftsUnavailable(str(exc)) from exc.__cause__
            raise

    async def delete(self, address: ChatAddress, message_id: int) -> None:
        """Delete a message the bot sent; failure is only logged (it is tidying up)."""
        try:
            await self._retrying(lambda: self._bot.delete_message(chat_id(address), message_id))
        except TelegramError as exc:
            log.warning("[Telegram] could not delete message %s: %s", message_id, exc)

    def paused_for(self, address: ChatAddress) -> float:
        """Seconds Telegram asked us to wait before writing to this chat again."""
        limiter = getattr(self._bot, "rate_limiter", None)
        return limiter.paused_for(address.chat_id) if isinstance(limiter, FloodControl) else 0.0

    async def typing(self, address: ChatAddress, action: str = ChatAction.TYPING) -> None:
        """Show "typing…" (or another chat action, such as "recording a voice message") for
        about five seconds; a failure only costs the indicator."""
        try:
            await self._bot.send_chat_action(
                chat_id=chat_id(address),
                action=action,
                message_thread_id=thread_id(address),
                rate_limit_args=NO_FLOOD_RETRY,
            )
        except TelegramError as exc:
            log.debug("[Telegram] typing indicator for chat %s failed: %s", address.chat_id, exc)

    async def _formatted_or_plain(
        self,
        method: str,
        target: str,
        part: MessagePart,
        attempt: Callable[[MessagePart], Awaitable[T]],
        preview: bool,
    ) -> T:
        try:
            try:
                return await self._retrying(lambda: attempt(part), once=preview)
            except BadRequest as exc:
                if not part.entities or not _rejects_entities(exc):
                    raise
                log.warning(
                    "[Telegram] %s: Telegram rejected the formatting (%s); resending as plain text",
                    method,
                    exc.message,
                )
                plain = without_formatting(part)
                return await self._retrying(lambda: attempt(plain), once=preview)
        except TelegramError as exc:
            level = logging.DEBUG if preview else logging.WARNING
            log.log(level, "[Telegram] %s to %s failed: %s", method, target, exc)
            raise DeliveryFailed(f"{method} to {target} failed: {exc}") from exc

    async def _retrying(self, call: Callable[[], Awaitable[T]], once: bool = False) -> T:
        return await (self._once if once else self._retry).call(call)
