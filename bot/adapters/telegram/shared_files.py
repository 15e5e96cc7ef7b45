"""Photos and documents sent in Telegram, as files for the core to read.

The file is downloaded within `telegram.maxFileMegabytes` (`files.py` refuses a larger one
before any request); the message's text names it (`[Photo] caption`, `[Document: lease.pdf]
caption`), which is all the session keeps. What the file holds is for `bot/media/` to judge.
"""

from __future__ import annotations

from bot.adapters.telegram.files import TelegramFiles
from bot.adapters.telegram.inbound import Attachment
from bot.conversation import IncomingFile

SHARED_FILE_KINDS = frozenset({"photo", "document"})
PHOTO_NAME, PHOTO_TYPE = "photo.jpg", "image/jpeg"
"""Telegram re-encodes every photo as JPEG and gives it no name."""


def is_shared_file(attachment: Attachment | None) -> bool:
    """A photo or a document: something the bot downloads and reads."""
    return (
        attachment is not None and attachment.kind in SHARED_FILE_KINDS and bool(attachment.file_id)
    )


def labelled(attachment: Attachment, caption: str) -> str:
    """The message's text: what was sent, then the caption."""
    if attachment.kind == "photo":
        label = "[Photo]"
    else:
        name = " ".join((attachment.file_name or "document").split())[:100]
        label = f"[Document: {name}]"
    return f"{label} {caption}".strip()


async def download(files: TelegramFiles, attachment: Attachment) -> IncomingFile:
    """The file's bytes; raises `FileTooLarge` or `FileUnavailable` (messages for the user)."""
    data = await files.download(attachment)
    if attachment.kind == "photo":
        return IncomingFile(PHOTO_NAME, PHOTO_TYPE, data)
    return IncomingFile(attachment.file_name or "document", attachment.mime_type, data)
