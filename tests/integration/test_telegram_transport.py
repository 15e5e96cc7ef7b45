"""PTB over the aiohttp transport: real requests to the emulated Bot API, errors as PTB's own."""

import socket

import pytest
from aiohttp import web
from telegram import Bot, InputFile
from telegram.error import BadRequest, NetworkError, TimedOut

from bot.adapters.telegram.http_transport import AiohttpRequest
from bot.adapters.telegram.ptb_compat import request_data
from tests.fakes.telegram_server import FakeTelegramServer, User


@pytest.fixture
def telegram():
    with FakeTelegramServer() as server:
        yield server


def bot_for(api_url: str, token: str, read_timeout: float = 5.0) -> Bot:
    return Bot(
        token,
        base_url=f"{api_url}/bot",
        request=AiohttpRequest(read_timeout=read_timeout),
        get_updates_request=AiohttpRequest(connection_pool_size=1, read_timeout=read_timeout),
    )


async def test_requests_and_long_polling_work(telegram):
    async with bot_for(telegram.api_url, telegram.token) as bot:
        assert bot.username == telegram.bot.username
        telegram.send_text(User(7, "Ann"), "hello")
        (update,) = await bot.get_updates(timeout=2)
        assert update.message.text == "hello"
        sent = await bot.send_message(7, "hi Ann")
        assert sent.text == "hi Ann" and telegram.texts(7) == ["hi Ann"]


async def test_errors_keep_ptb_meaning(telegram):
    async with bot_for(telegram.api_url, telegram.token, read_timeout=0.3) as bot:
        telegram.fail("sendMessage", 400, "Bad Request: chat not found")
        with pytest.raises(BadRequest, match="hat not found"):
            await bot.send_message(7, "x")
        telegram.fail("getChat", 503)
        with pytest.raises(NetworkError):
            await bot.get_chat(7)
        telegram.fail("getMe", 200, delay=1.0)
        with pytest.raises(TimedOut):
            await bot.get_me()


async def test_unreachable_server_is_a_network_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    bot = bot_for(f"http://127.0.0.1:{port}", "1:x")
    with pytest.raises(NetworkError):
        await bot.initialize()
    await bot.shutdown()


async def test_files_are_sent_as_multipart():
    received = {}

    async def handler(request: web.Request) -> web.Response:
        form = await request.post()
        received.update(caption=form["caption"], document=form["document"].file.read())
        return web.json_response({"ok": True, "result": True})

    app = web.Application()
    app.router.add_post("/upload", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    transport = AiohttpRequest()
    await transport.initialize()
    try:
        data = request_data(
            {"caption": "notes", "document": InputFile(b"file body", filename="a.txt")}
        )
        status, _ = await transport.do_request(f"http://127.0.0.1:{port}/upload", "POST", data)
    finally:
        await transport.shutdown()
        await runner.cleanup()
    assert status == 200
    assert received == {"caption": "notes", "document": b"file body"}
