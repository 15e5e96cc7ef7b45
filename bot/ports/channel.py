"""Where replies go: Telegram, the terminal, or a test's recorder."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.conversation import ChatAddress


class DeliveryFailed(Exception):
    """A reply could not be delivered, retries included; the message says why, for the log."""


class RecipientUnreachable(DeliveryFailed):
    """The person cannot be written to in private: they never opened a private chat with the
    bot, or blocked it (Telegram's 403). Only they can change that."""


class ReplyStream(Protocol):
    """One reply shown while it is being written, then finished with its final text."""

    async def update(self, text: str) -> None:
        """Show `text`, all of the answer so far. May be throttled or skipped."""
        ...

    async def finish(self, text: str) -> None:
        """Replace whatever was shown with the final `text` (formatted, split if long).

        Raises `DeliveryFailed` only when nothing of the reply could be delivered.
        """
        ...


class ChannelPort(Protocol):
    """A way to talk to people. The pipeline never sees a channel's own exceptions' types."""

    name: str

    async def send(self, address: ChatAddress, text: str) -> None:
        """Deliver a complete reply to `address`; raises `DeliveryFailed` when it cannot."""
        ...

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        """A stream for the reply to `address`, or None when this channel does not stream."""
        ...


@runtime_checkable
class PrivateReplies(Protocol):
    """A channel with group chats that can also write to one member alone, so that what is
    for their eyes only (`/memory`, `/forget`, `/reminders`) never shows in the group."""

    async def send_privately(self, user_id: str, text: str) -> None:
        """Deliver `text` to the private chat with `user_id`; raises `RecipientUnreachable`
        when that person cannot be written to, `DeliveryFailed` for any other failure."""
        ...
