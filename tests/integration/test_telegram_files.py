"""Downloading what users send: getFile, then the file, with the size checked before and during."""

import os

import pytest
from telegram import Bot, Update

from bot.adapters.telegram.files import (
    CLOUD_LIMIT_BYTES,
    FileTooLarge,
    FileUnavailable,
    TelegramFiles,
    download_limit_bytes,
)
from bot.adapters.telegram.http_transport import AiohttpRequest
from bot.adapters.telegram.inbound import Attachment, attachment_of
from bot.adapters.telegram.options import TELEGRAM_API_URL
from tests.fakes.telegram_server import FakeTelegramServer, User

ANN = User(7, "Ann")


@pytest.fixture
def telegram():
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def connect(telegram):
    bots: list[Bot] = []

    async def files_with_limit(limit: int) -> TelegramFiles:
        request = AiohttpRequest()
        bot = Bot(
            telegram.token,
            base_url=f"{telegram.api_url}/bot",
            base_file_url=f"{telegram.api_url}/file/bot",
            request=request,
        )
        await bot.initialize()
        bots.append(bot)
        return TelegramFiles(bot, request, lambda: limit)

    yield files_with_limit
    for bot in bots:
        await bot.shutdown()


def sent_attachment(telegram) -> Attachment:
    message = Update.de_json(telegram.queued_updates()[-1], None).message
    attachment = attachment_of(message)
    assert attachment is not None
    return attachment


async def test_a_voice_note_is_described_and_downloaded(telegram, connect):
    audio = os.urandom(50_000)
    telegram.send_media(ANN, "voice", content=audio, duration=4)
    attachment = sent_attachment(telegram)
    assert (attachment.kind, attachment.size, attachment.duration) == ("voice", 50_000, 4)
    assert attachment.mime_type == "audio/ogg"
    files = await connect(1_000_000)
    assert await files.download(attachment) == audio
    assert telegram.downloads == [attachment.file_id]


async def test_a_file_said_to_be_too_large_is_refused_before_any_request(telegram, connect):
    telegram.send_media(ANN, "audio", content=b"x" * 10, claimed_size=5_000_001)
    files = await connect(5_000_000)
    with pytest.raises(FileTooLarge, match=r"up to 5 MB") as refused:
        await files.download(sent_attachment(telegram))
    assert "audio" in str(refused.value)
    assert telegram.calls("getFile") == [] and telegram.downloads == []


async def test_telegram_refusing_a_big_file_names_the_cloud_limit(telegram, connect):
    file = telegram.add_file(b"x", "voice", claimed_size=25_000_000)
    files = await connect(100_000_000)  # as if a local server were expected
    with pytest.raises(FileTooLarge, match=r"up to 20 MB"):
        await files.download(Attachment("voice", file.file_id))  # the message named no size
    assert telegram.downloads == []


async def test_a_server_lying_about_the_size_costs_at_most_the_limit(telegram, connect):
    file = telegram.add_file(os.urandom(300_000), "document", claimed_size=1000)
    files = await connect(100_000)
    with pytest.raises(FileTooLarge, match=r"up to 0.1 MB"):
        await files.download(Attachment("document", file.file_id, size=1000))


async def test_unknown_files_and_failing_servers_are_unavailable(telegram, connect):
    files = await connect(1_000_000)
    with pytest.raises(FileUnavailable, match="send it again"):
        await files.download(Attachment("voice", "no-such-file"))
    file = telegram.add_file(b"abc", "voice")
    telegram.fail("getFile", 502)
    with pytest.raises(FileUnavailable):
        await files.download(Attachment("voice", file.file_id))
    assert await files.download(Attachment("voice", file.file_id)) == b"abc"


def test_the_cloud_api_caps_the_limit_and_a_local_server_takes_the_configured_one():
    assert download_limit_bytes(TELEGRAM_API_URL, 50) == CLOUD_LIMIT_BYTES == 20_000_000
    assert download_limit_bytes(TELEGRAM_API_URL, 5) == 5_000_000
    assert download_limit_bytes("http://localhost:8081", 200) == 200_000_000
