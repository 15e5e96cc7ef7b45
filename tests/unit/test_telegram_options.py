"""Telegram options from the settings: the webhook's secret when several processes may share it."""

import logging

import pytest

from bot.adapters.telegram.options import TelegramOptions
from bot.settings import Settings

WEBHOOK = {
    "telegram_bot_token": "123456:AAE-token",
    "telegram_webhook_url": "https://bot.example/hook",
}
WARNING = "TELEGRAM_WEBHOOK_SECRET is not set"


@pytest.fixture(autouse=True)
def nothing_from_outside(monkeypatch):
    for name in ("TELEGRAM_WEBHOOK_SECRET", "DATABASE_URL", "TELEGRAM_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)


def options(tmp_path, **values) -> TelegramOptions:
    settings = Settings(_env_file=None, data_dir=tmp_path, **WEBHOOK, **values)  # type: ignore[call-arg]
    return TelegramOptions.from_settings(settings)


def test_a_shared_database_without_a_webhook_secret_warns_that_processes_would_disagree(
    tmp_path, caplog
):
    caplog.set_level(logging.WARNING, logger="bot.adapters.telegram.options")
    made = options(tmp_path, database_url="postgresql://bot:pw@db/bot")
    assert made.webhook is not None and len(made.webhook.secret) >= 32, "one is made up"
    assert [r.getMessage() for r in caplog.records if WARNING in r.getMessage()]
    assert "pw" not in caplog.text


def test_one_process_on_files_or_a_set_secret_is_not_warned_about(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="bot.adapters.telegram.options")
    options(tmp_path)
    options(tmp_path, database_url="postgresql://bot:pw@db/bot", telegram_webhook_secret="s3cret")
    made = options(tmp_path, telegram_webhook_secret="s3cret")
    assert made.webhook is not None and made.webhook.secret == "s3cret"
    assert WARNING not in caplog.text
