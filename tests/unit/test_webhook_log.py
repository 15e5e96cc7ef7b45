"""A forged webhook post is refused unread, and its log line cannot be multiplied at will."""

import logging

import aiohttp

from bot.adapters.telegram.webhook import WebhookReceiver
from tests.fakes.background_server import free_port
from tests.fakes.clock import FakeClock

FORGED = "webhook post without the right secret refused"


async def test_forged_posts_log_one_line_a_minute_with_a_count(caplog):
    clock = FakeClock()
    accepted: list[object] = []

    async def accept(updates: list[dict]) -> None:
        accepted.extend(updates)

    receiver = WebhookReceiver("/hook", "s3cret_token", accept, clock=clock)
    port = free_port()
    await receiver.start("127.0.0.1", port)
    url = f"http://127.0.0.1:{port}/hook"

    async def forge(count: int) -> list[int]:
        statuses = []
        async with aiohttp.ClientSession() as session:
            for n in range(count):
                async with session.post(url, json={"update_id": n}) as response:
                    statuses.append(response.status)
        return statuses

    try:
        with caplog.at_level(logging.WARNING, logger="bot.adapters.telegram.webhook"):
            assert await forge(200) == [403] * 200
            clock.advance(30)
            await forge(1)
            lines = [r.getMessage() for r in caplog.records if FORGED in r.getMessage()]
            assert len(lines) == 1
            clock.advance(30)
            await forge(1)
    finally:
        await receiver.stop()
    lines = [r.getMessage() for r in caplog.records if FORGED in r.getMessage()]
    assert len(lines) == 2
    assert lines[1].endswith("(200 more since the last such line)")
    assert accepted == []
