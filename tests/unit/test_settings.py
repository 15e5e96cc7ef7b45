"""Secrets from the environment and `.env`: loaded clean, refused when damaged, never shown."""

import logging
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.__main__ import EPILOG, describe_invalid_settings
from bot.logging_setup import RedactingFormatter
from bot.settings import Settings

KEYS = ("OPENAI_API_KEY", "RAG_API_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET")


@pytest.fixture(autouse=True)
def no_keys_from_outside(monkeypatch):
    for name in (*KEYS, "OPENAI_BASE_URL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)


def secrets(settings: Settings) -> dict[str, str | None]:
    values = {
        "OPENAI_API_KEY": settings.openai_api_key,
        "RAG_API_KEY": settings.rag_api_key,
        "TELEGRAM_BOT_TOKEN": settings.telegram_bot_token,
        "TELEGRAM_WEBHOOK_SECRET": settings.telegram_webhook_secret,
    }
    return {name: v.get_secret_value() if v else None for name, v in values.items()}


def test_keys_from_the_environment_lose_a_trailing_newline_and_spaces(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-123\n")
    monkeypatch.setenv("RAG_API_KEY", "\trag-env-key ")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:AAE-token\r\n")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "hook_secret\n")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert secrets(settings) == {
        "OPENAI_API_KEY": "sk-env-key-123",
        "RAG_API_KEY": "rag-env-key",
        "TELEGRAM_BOT_TOKEN": "123456:AAE-token",
        "TELEGRAM_WEBHOOK_SECRET": "hook_secret",
    }
    assert sorted(settings.secret_values()) == sorted(v for v in secrets(settings).values() if v)


def test_keys_from_a_dot_env_file_lose_a_trailing_newline_and_spaces(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text('OPENAI_API_KEY="sk-file-key-456\\n"\nRAG_API_KEY="rag-file-key  "\n')
    settings = Settings(_env_file=env_file)  # type: ignore[call-arg]
    assert secrets(settings)["OPENAI_API_KEY"] == "sk-file-key-456"
    assert secrets(settings)["RAG_API_KEY"] == "rag-file-key"


def test_a_key_of_only_whitespace_counts_as_unset(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", " \n")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.openai_api_key is None and not settings.llm_configured


@pytest.mark.parametrize("name", KEYS)
@pytest.mark.parametrize("damaged", ["sk-two parts", "sk-line\nbreak", "sk-bell\x07char"])
def test_a_key_with_inner_whitespace_or_control_characters_is_refused(monkeypatch, name, damaged):
    monkeypatch.setenv(name, damaged)
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None)  # type: ignore[call-arg]
    message = describe_invalid_settings(refused.value)
    assert message.startswith(f"{name}: ") and "space" in message
    assert damaged not in message and damaged.split()[0] not in message


def test_the_redactor_blanks_a_secret_given_with_a_trailing_newline():
    formatter = RedactingFormatter("%(message)s", ["sk-secret-1234\n", " rag-key-5678\r\n"])
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "a=%s b=%s", None, None)
    record.args = ("sk-secret-1234", "rag-key-5678")
    assert formatter.format(record) == "a=*** b=***"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bot:pg-pass-789@db.internal:5433/bot",
        "host=db.internal port=5433 user=bot password=pg-pass-789 dbname=bot",
    ],
)
def test_the_database_password_never_reaches_a_log_line(monkeypatch, url):
    from bot.adapters.postgres.database import describe_url

    monkeypatch.setenv("DATABASE_URL", url)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert "pg-pass-789" in settings.secret_values()
    formatter = RedactingFormatter("%(message)s", settings.secret_values())
    record = logging.LogRecord("x", logging.ERROR, "", 0, "login pg-pass-789 at %s", (url,), None)
    assert "pg-pass-789" not in formatter.format(record)
    assert describe_url(url) == "bot@db.internal:5433/bot"
    assert "pg-pass-789" not in repr(settings)


def test_mcp_placeholders_read_the_env_file_under_the_process_environment(tmp_path, monkeypatch):
    from bot.settings import environment_with

    env_file = tmp_path / ".env"
    env_file.write_text("SEARCH_TOKEN=from-file\nONLY_IN_FILE=yes\nEMPTY=\n")
    monkeypatch.setenv("SEARCH_TOKEN", "from-process")
    merged = environment_with(env_file)
    assert merged["SEARCH_TOKEN"] == "from-process"
    assert merged["ONLY_IN_FILE"] == "yes"
    assert environment_with(tmp_path / "missing.env").get("ONLY_IN_FILE") is None


def test_help_names_every_variable_of_the_env_example():
    """`python -m bot --help` is where an operator looks first: it must know every variable
    `.env.example` offers, the commented-out examples included."""
    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    names = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]{2,})=", example, flags=re.MULTILINE))
    assert "EMBEDDINGS_API_KEY" in names and "SEARCH_TOKEN" in names
    assert sorted(name for name in names if name not in EPILOG) == []
