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


def shared_file(attachment: Attachment, data: bytes = b"") -> IncomingFile:
    """The file for the core; without `data` only to name it (`IncomingFile.label`)."""
    if attachment.kind == "photo":
        return IncomingFile(PHOTO_NAME, PHOTO_TYPE, data, is_photo=True)
    return IncomingFile(attachment.file_name or "document", attachment.mime_type, data)


def labelled(attachment: Attachment, caption: str) -> str:
    """The message's text: what was sent (`[Photo]`, `[Document: name]`), then the caption."""
    return f"{shared_file(attachment).label} {caption}".strip()


async def download(files: TelegramFiles, attachment: Attachment) -> IncomingFile:
    """The file's bytes; raises `FileTooLarge` or `FileUnavailable` (messages for the user)."""
    return shared_file(attachment, await files.download(attachment))
