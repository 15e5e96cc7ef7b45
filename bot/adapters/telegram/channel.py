"""`ChannelPort` for Telegram: formatted, split replies; streaming when the config says so,
as a draft in private chats (`drafts.py`) and as an edited preview elsewhere (`streaming.py`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar

from telegram.error import Forbidden

from bot.adapters.telegram.delivery import DraftsUnavailable, TelegramSender
from bot.adapters.telegram.drafts import DEFAULT_PACE, DraftPace, TelegramDraftStream
from bot.adapters.telegram.formatting import render_markdown
from bot.adapters.telegram.streaming import TelegramReplyStream
from bot.adapters.telegram.typing_indicator import TypingIndicators
from bot.config import RuntimeConfigStore
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed, RecipientUnreachable, ReplyStream

log = logging.getLogger(__name__)

# In a group the reply quotes the message it answers. The update handler sets this for the
# turn's task; the channel reads it, so the core's ports need not know Telegram message ids.
_replying_to: ContextVar[tuple[str, int] | None] = ContextVar("telegram_reply_to", default=None)


def reply_to_in_this_turn(address: ChatAddress, message_id: int | None) -> None:
    """Make replies to `address` in the current task quote `message_id` (None: no quote)."""
    _replying_to.set((address.session_key, message_id) if message_id else None)


# Where the ids of a streamed reply's preview messages are kept while it is not final (the
# inbox, with the update), so that a replay after a kill can delete a half-written preview.
_preview_keeper: ContextVar[Callable[[list[int]], None] | None] = ContextVar(
    "telegram_preview_keeper", default=None
)


def keep_previews_in_this_turn(keeper: Callable[[list[int]], None] | None) -> None:
    """Report the preview messages of streams opened in the current task to `keeper`."""
    _preview_keeper.set(keeper)


def _reply_target(address: ChatAddress) -> int | None:
    target = _replying_to.get()
    return target[1] if target and target[0] == address.session_key else None


class TelegramChannel:
    """Sends replies to Telegram chats and forum topics."""

    name = "telegram"

    def __init__(
        self,
        sender: TelegramSender,
        config: RuntimeConfigStore,
        typing: TypingIndicators,
        edit_interval_seconds: float = 1.0,
        drafts: DraftPace = DEFAULT_PACE,
    ) -> None:
        self._sender = sender
        self._config = config
        self._typing = typing
        self._edit_interval = edit_interval_seconds
        self._draft_pace = drafts
        self._drafts_refused = False

    async def send(self, address: ChatAddress, text: str) -> None:
        self._typing.stop(address)
        reply_to = _reply_target(address)
        for index, part in enumerate(render_markdown(text)):
            await self._sender.send(address, part, reply_to=reply_to if index == 0 else None)

    async def send_privately(self, user_id: str, text: str) -> None:
        """`text` to the private chat with `user_id` (in Telegram its id is the user's). A 403
        (no private chat started, or the bot blocked) is `RecipientUnreachable`."""
        address = ChatAddress(self.name, user_id)
        try:
            for part in render_markdown(text):
                await self._sender.send(address, part)
        except DeliveryFailed as exc:
            if isinstance(exc.__cause__, Forbidden):
                raise RecipientUnreachable(str(exc)) from exc.__cause__
            raise

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        telegram = self._config.current().telegram
        if not telegram.streaming:
            return None
        private = int(address.chat_id) > 0  # Telegram's group and channel ids are negative
        if telegram.drafts and private and not self._drafts_refused:
            return TelegramDraftStream(
                self._sender,
                address,
                fallback=lambda: self._edited_preview(address),
                pace=self._draft_pace,
                reply_to=_reply_target(address),
                on_final=lambda: self._typing.stop(address),
                on_unavailable=self._refuse_drafts,
            )
        return self._edited_preview(address)

    def _refuse_drafts(self, exc: DraftsUnavailable) -> None:
        if not self._drafts_refused:
            log.warning("[Telegram] %s; streaming by edited previews from now on", exc)
        self._drafts_refused = True

    def _edited_preview(self, address: ChatAddress) -> ReplyStream:
        return TelegramReplyStream(
            self._sender,
            address,
            interval_seconds=self._edit_interval,
            reply_to=_reply_target(address),
            on_final=lambda: self._typing.stop(address),
            on_preview=_preview_keeper.get(),
        )
