"""What an update asks of the bot: a text turn, an attachment, or nothing.

Only the bot's own business passes: edited messages, messages of other bots, commands meant
for another bot and, in groups, messages that neither mention the bot nor reply to it (when
the config asks for a mention) are ignored here, before any access check or reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType

from bot.commands import is_command
from bot.conversation import ChatAddress, clean_text

CHANNEL = "telegram"
GUEST_CHANNEL = "telegram-guest"
"""The channel of the chats the bot is summoned to as a guest (`guest.py`): never the same
session, memory or reminders as a chat of the same id it is a member of."""
ATTACHMENT_KINDS = (
    "photo",
    "sticker",
    "voice",
    "audio",
    "video",
    "video_note",
    "animation",
    "document",
    "location",
    "venue",
    "contact",
    "poll",
    "dice",
    "story",
)
_COMMAND_TARGET = re.compile(r"^/[A-Za-z0-9_]{1,32}@([A-Za-z0-9_]+)")


@dataclass(frozen=True)
class Attachment:
    """What came with a message besides its text, described without downloading it.

    Handlers dispatch on `kind`; `file_id` is None for what holds no file (a location, a
    poll...). Sizes and types are Telegram's claims: a download checks the size again.
    """

    kind: str
    """One of `ATTACHMENT_KINDS`: `voice`, `audio`, `video_note`, `photo`, `document`..."""
    file_id: str | None = None
    size: int | None = None
    """Bytes, when Telegram says (it usually does)."""
    mime_type: str | None = None
    duration: int | None = None
    """Seconds, for voice notes, audio, videos and video notes."""
    file_name: str | None = None

    @property
    def spoken(self) -> str:
        """The kind in words: `video note`."""
        return self.kind.replace("_", " ")


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is in Telegram, from getMe: needed to tell mentions and replies to it."""

    id: int
    username: str


@dataclass(frozen=True)
class Inbound:
    """A message for the bot, reduced to what the rest of the channel needs."""

    address: ChatAddress
    user_id: int
    message_id: int
    sent_at: datetime
    text: str
    """The text or caption, the bot's @mention removed; may be empty."""
    attachment: Attachment | None
    """What else came with it (a photo, a voice note...), if anything."""
    in_group: bool
    user_name: str | None = None
    language_code: str | None = None
    """The language the sender's Telegram app is set to (`ru`, `en-GB`), when it says."""
    transcript: str | None = None
    """What was said in the attached voice note, audio or video note, once transcribed; it is
    part of `text` too."""


def address_of(message: Message) -> ChatAddress:
    """Chat and, in a forum, topic: each topic is a session of its own. A guest message's
    chat is a chat of the guest channel: Telegram says its id may be that of another chat."""
    thread = message.message_thread_id if message.is_topic_message else None
    channel = GUEST_CHANNEL if message.guest_query_id else CHANNEL
    return ChatAddress(channel, str(message.chat.id), str(thread) if thread else None)


def chat_key(update: object) -> str | None:
    """The session key an update belongs to, for per-chat ordering; None when it has none."""
    if isinstance(update, Update) and update.effective_message is not None:
        return address_of(update.effective_message).session_key
    return None


def is_command_update(update: object) -> bool:
    """A command (`/stop`, `/new`...): handled in its chat's command lane, never queued
    behind the answer in progress (`ChatLanes`)."""
    message = update.message if isinstance(update, Update) else None
    return message is not None and is_command(message.text or message.caption or "")


def read_update(update: Update, me: BotIdentity, require_mention: bool) -> Inbound | None:
    """The message for the bot in `update`, or None when the bot should stay quiet."""
    message = update.message  # edited messages, channel posts and the rest stay unanswered
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    chat_type = message.chat.type
    if chat_type not in (ChatType.PRIVATE, ChatType.GROUP, ChatType.SUPERGROUP):
        return None
    text = clean_text(message.text or message.caption or "")  # half an emoji, control chars
    target = _COMMAND_TARGET.match(text)
    if target and target.group(1).lower() != me.username.lower():
        return None  # `/help@OtherBot`
    in_group = chat_type != ChatType.PRIVATE
    if in_group and require_mention and not _addresses_bot(message, text, me):
        return None
    return Inbound(
        address=address_of(message),
        user_id=message.from_user.id,
        message_id=message.message_id,
        sent_at=message.date,
        text=without_mention(text, me) if in_group else text.strip(),
        attachment=attachment_of(message),
        in_group=in_group,
        user_name=message.from_user.first_name,
        language_code=message.from_user.language_code,
    )


def attachment_of(message: Message) -> Attachment | None:
    """The message's attachment, if any; of a photo, its largest size."""
    kind = next((kind for kind in ATTACHMENT_KINDS if getattr(message, kind, None)), None)
    if kind is None:
        return None
    media = getattr(message, kind)
    if isinstance(media, tuple):  # a photo comes in several sizes, smallest first
        media = media[-1]
    file_id = getattr(media, "file_id", None)
    duration = getattr(media, "duration", None)
    return Attachment(
        kind=kind,
        file_id=file_id if isinstance(file_id, str) else None,
        size=getattr(media, "file_size", None),
        mime_type=getattr(media, "mime_type", None),
        duration=int(duration.total_seconds()) if isinstance(duration, timedelta) else duration,
        file_name=getattr(media, "file_name", None),
    )


def _addresses_bot(message: Message, text: str, me: BotIdentity) -> bool:
    """A command, an @mention of the bot, or a reply to one of its messages."""
    if text.startswith("/"):
        return True  # bare or `@ThisBot`; `@OtherBot` was dropped before
    entities = message.parse_entities() or message.parse_caption_entities()
    for entity, value in entities.items():
        if entity.type == MessageEntity.MENTION and value[1:].lower() == me.username.lower():
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == me.id:
            return True
    replied = message.reply_to_message
    # In a forum every message "replies" to its topic's first message; that is no reply to us.
    return bool(
        replied is not None
        and replied.from_user is not None
        and replied.from_user.id == me.id
        and replied.forum_topic_created is None
    )


def without_mention(text: str, me: BotIdentity) -> str:
    """`text` without the bot's @mention (and a space before it)."""
    mention = re.compile(rf"[ \t]?@{re.escape(me.username)}\b", re.IGNORECASE)
    return mention.sub("", text).strip()
