"""The Telegram channel with `DATABASE_URL`: the inbox is a table. A webhook post the database
cannot take is refused (503), so Telegram keeps the update and posts it again; once the
database is back it is answered, once."""

from __future__ import annotations

import pytest

from bot.adapters.postgres.inbox import PostgresUpdateInbox
from bot.adapters.telegram import TelegramOptions, WebhookOptions
from bot.app import BotApp
from tests.conftest import edit_runtime_config
from tests.fakes.postgres import free_port
from tests.fakes.telegram_server import User

pytestmark = pytest.mark.postgres

ALICE = User(1001, "Alice", "alice")


async def test_a_webhook_post_the_database_cannot_take_is_posted_again_and_answered_once(
    settings, telegram, fake_llm, own_postgres, caplog
):
    edit_runtime_config(settings.runtime_config_path, telegram={"allowedUsers": [ALICE.id]})
    settings.openai_base_url = fake_llm.base_url
    settings.database_url = own_postgres.create_database()
    port = free_port()
    webhook = WebhookOptions(f"http://127.0.0.1:{port}/telegram", port=port, secret="s3cret")
    options = TelegramOptions(
        telegram.token, settings.data_dir / "unused", api_url=telegram.api_url, webhook=webhook
    )
    app = BotApp.build(settings, telegram=options)
    bot = app.telegram
    assert bot is not None and isinstance(bot.inbox, PostgresUpdateInbox)
    await app.start()  # the database first: the inbox lives there
    await bot.start()
    try:
        telegram.send_text(ALICE, "before the outage")
        await telegram.wait_for(lambda: telegram.texts(ALICE.id) == ["echo: before the outage"])

        own_postgres.pause()
        telegram.send_text(ALICE, "during the outage")
        refused = lambda: [r for r in caplog.records if "not journaled" in r.getMessage()]  # noqa: E731
        await telegram.wait_for(lambda: bool(refused()), within=15)
        assert telegram.pending_updates == 1, "Telegram still holds it"
        own_postgres.resume()
        both = ["echo: before the outage", "echo: during the outage"]
        await telegram.wait_for(lambda: telegram.texts(ALICE.id) == both, within=30)
        assert telegram.pending_updates == 0
        assert not (settings.data_dir / "telegram" / "inbox.jsonl").exists(), "nothing in files"
    finally:
        await bot.stop()
        await app.aclose()
