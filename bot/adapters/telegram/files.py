"""Files users send (voice notes, photos, documents), fetched through the Bot API.

`getFile` names the file, then it is downloaded into memory. Telegram's cloud Bot API serves
bots files of at most 20 MB; a self-hosted `telegram-bot-api` (TELEGRAM_API_URL) serves larger
ones, up to `telegram.maxFileMegabytes`. The size is checked three times, so a file over the
limit costs nothing: Telegram's claim in the message (before any request), getFile's answer
(before the download), and the bytes as they arrive (a server that lies costs at most the
limit). Every failure leaves as `FileTooLarge` or `FileUnavailable`, whose message a user can
read; file URLs hold the bot token, so they never go into a message or a log line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from telegram import Bot
from telegram.constants import FileSizeLimit
from telegram.error import BadRequest, TelegramError

from bot.adapters.telegram.http_transport import AiohttpRequest, BodyTooLarge
from bot.adapters.telegram.inbound import Attachment
from bot.adapters.telegram.options import TELEGRAM_API_URL
from bot.i18n.catalogue import telegram as texts

log = logging.getLogger(__name__)

CLOUD_LIMIT_BYTES = FileSizeLimit.FILESIZE_DOWNLOAD
"""What Telegram's own Bot API lets a bot download: 20 MB."""
DOWNLOAD_TIMEOUT_SECONDS = 120.0
"""One whole download, wall clock; 20 MB at a slow 2 Mbit/s takes about 80 s."""


class FileTooLarge(Exception):
    """Over the download limit; refused before (or while) downloading."""

    def __init__(self, kind: str, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        super().__init__(texts.file_too_large(kind, megabytes(limit_bytes)))


class FileUnavailable(Exception):
    """Telegram would not hand the file over (gone, network down); worth another try later."""

    def __init__(self, kind: str) -> None:
        super().__init__(texts.file_unavailable(kind))


def megabytes(size: int) -> str:
    """`20 MB`: sizes as people say them (decimal, like Telegram's own limits)."""
    return f"{size / 1_000_000:g} MB"


def download_limit_bytes(api_url: str, configured_megabytes: int) -> int:
    """The largest file the bot downloads: `telegram.maxFileMegabytes`, at most 20 MB on
    Telegram's cloud Bot API (it refuses more); a local Bot API server allows what is set."""
    configured = configured_megabytes * 1_000_000
    if api_url.rstrip("/") == TELEGRAM_API_URL:
        return min(configured, CLOUD_LIMIT_BYTES)
    return configured


class TelegramFiles:
    """Downloads attachments into memory, within the size limit of the moment."""

    def __init__(
        self,
        bot: Bot,
        request: AiohttpRequest,
        limit_bytes: Callable[[], int],
        timeout_seconds: float = DOWNLOAD_TIMEOUT_SECONDS,
    ) -> None:
        self._bot = bot
        self._request = request
        self._limit_bytes = limit_bytes
        self._timeout = timeout_seconds

    @property
    def limit_bytes(self) -> int:
        return self._limit_bytes()

    def check_size(self, attachment: Attachment) -> None:
        """Raise `FileTooLarge` when Telegram already says the file is over the limit."""
        limit = self.limit_bytes
        if attachment.size is not None and attachment.size > limit:
            raise FileTooLarge(attachment.spoken, limit)

    async def download(self, attachment: Attachment) -> bytes:
        """The attachment's bytes. Raises `FileTooLarge` or `FileUnavailable`."""
        if attachment.file_id is None:
            raise ValueError(f"a {attachment.kind} holds no file")
        self.check_size(attachment)
        limit = self.limit_bytes
        try:
            file = await self._bot.get_file(attachment.file_id)
        except BadRequest as exc:
            if "too big" in str(exc).lower():  # "Bad Request: file is too big"
                raise FileTooLarge(attachment.spoken, min(limit, CLOUD_LIMIT_BYTES)) from None
            log.warning("[Telegram] getFile refused a %s: %s", attachment.kind, exc)
            raise FileUnavailable(attachment.spoken) from None
        except TelegramError as exc:
            log.warning("[Telegram] getFile failed for a %s: %s", attachment.kind, exc)
            raise FileUnavailable(attachment.spoken) from None
        if file.file_size is not None and file.file_size > limit:
            raise FileTooLarge(attachment.spoken, limit)
        if not file.file_path:
            log.warning("[Telegram] getFile named no path for a %s", attachment.kind)
            raise FileUnavailable(attachment.spoken)
        try:
            return await self._fetch(file.file_path, limit)
        except BodyTooLarge:
            raise FileTooLarge(attachment.spoken, limit) from None
        except (TelegramError, OSError) as exc:
            log.warning("[Telegram] downloading a %s failed: %s", attachment.kind, exc)
            raise FileUnavailable(attachment.spoken) from None

    async def _fetch(self, file_path: str, limit: int) -> bytes:
        # A local Bot API server started with `--local` names a path on its own disk, which
        # the bot reads directly when it shares that disk (PTB leaves such paths as they are).
        if not file_path.startswith(("http://", "https://")):
            return await asyncio.to_thread(_read_bounded, Path(file_path), limit)
        return await self._request.fetch_bounded(file_path, limit, self._timeout)


def _read_bounded(path: Path, limit: int) -> bytes:
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise BodyTooLarge(limit)
    return data
