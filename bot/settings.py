"""Secrets and paths from the environment or `.env`.

Everything an operator may want to change while the bot runs lives in the runtime config
(`preferences/runtime-config.json`); this module holds only what is fixed for the life of the
process and what must never be written to a file a user may share: keys and tokens.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

NO_LLM_MESSAGE = """No LLM is configured, so the bot cannot answer.
Set one of these in the environment or in .env (copy .env.example to .env for a template),
then start the bot again:

  OPENAI_API_KEY=sk-...
      OpenAI, or a hosted OpenAI-compatible API such as OpenRouter
      (then also OPENAI_BASE_URL=https://openrouter.ai/api/v1)
  OPENAI_BASE_URL=http://localhost:11434/v1
      a local server, which needs no key: Ollama (port 11434), vLLM
      (http://localhost:8000/v1) or llama.cpp's llama-server (http://localhost:8080/v1)

Pick the model in preferences/runtime-config.json, field llm.model."""


_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
_SECRETS = (
    "telegram_bot_token",
    "telegram_webhook_secret",
    "openai_api_key",
    "rag_api_key",
    "speech_api_key",
)


class Settings(BaseSettings):
    """Process-wide settings. Secrets are `SecretStr`, so they never print by accident."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        env_ignore_empty=True,
        extra="ignore",
        populate_by_name=True,
        validate_assignment=True,
    )

    telegram_bot_token: SecretStr | None = None
    telegram_api_url: str = Field(
        default="https://api.telegram.org",
        pattern=r"^https?://[^\s/]+",
    )
    """Root of the Bot API server: Telegram's, or a self-hosted `telegram-bot-api`."""
    telegram_webhook_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s/]+",
    )
    """Public URL Telegram posts updates to; unset means long polling."""
    telegram_webhook_listen: str = "127.0.0.1"
    telegram_webhook_port: int = Field(
        default=8443,
        ge=1,
        le=65535,
    )
    telegram_webhook_secret: SecretStr | None = None
    """Checked on every webhook request (Telegram's X-Telegram-Bot-Api-Secret-Token header)."""
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    rag_api_key: SecretStr | None = None
    embeddings_api_key: SecretStr | None = None
    """For `memory.embeddings.provider: openai`; OPENAI_API_KEY when unset."""
    speech_api_key: SecretStr | None = None
    """For the speech servers (`speech` in the runtime config); OPENAI_API_KEY when unset."""
    database_url: SecretStr | None = None
    """PostgreSQL for the shared state (`docs/DEPLOYMENT.md`); unset keeps it in files. A
    secret: it may hold the password."""
    data_dir: Path = Field(default=Path("data"), validation_alias="BOT_DATA_DIR")
    runtime_config_path: Path = Field(
        default=Path("preferences/runtime-config.json"),
        validation_alias="BOT_RUNTIME_CONFIG",
    )
    prompts_dir: Path = Field(
        default=Path("preferences/prompts"),
        validation_alias="BOT_PROMPTS_DIR",
    )
    skills_dir: Path = Field(
        default=Path("preferences/skills"),
        validation_alias="BOT_SKILLS_DIR",
    )
    """One folder per skill, each with a `SKILL.md` (docs/SKILLS.md)."""
    log_level: str = "INFO"
    http_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
    )
    """The operators' listener (`/healthz`, `/readyz`, `/metrics`); unset: none (0: any port)."""
    http_listen: str = Field(
        default="127.0.0.1",
        min_length=1,
    )
    """Its address: loopback unless a container or a prober elsewhere needs 0.0.0.0."""

    @field_validator(*_SECRETS, "database_url", mode="before")
    @classmethod
    def _strip_secret(cls, value: object) -> object:
        # A key pasted with a line break or a space around it is the key: `export KEY=$(cat f)`
        # and editors add them. Only blank means unset.
        if isinstance(value, str):
            return value.strip() or None
        return value

    @field_validator(*_SECRETS)
    @classmethod
    def _secret_is_one_word(cls, value: SecretStr | None) -> SecretStr | None:
        # No key or token holds spaces or control characters: one inside is a paste gone
        # wrong, and it would break the HTTP header it is sent in. The value is never shown.
        if value is not None and _SPACE_OR_CONTROL.search(value.get_secret_value()):
            raise ValueError("must not contain spaces, line breaks or control characters")
        return value

    @field_validator("data_dir")
    @classmethod
    def _real_data_dir(cls, value: Path) -> Path:
        """The data dir as its real path: it may itself be a link (a volume), and any link
        found below it is then one placed inside it (`bot/storage/atomic.py` refuses those)."""
        return value.resolve()

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret_charset(cls, value: SecretStr | None) -> SecretStr | None:
        # Telegram's rule for secret_token; the value itself never goes into the error.
        if value is not None and not _WEBHOOK_SECRET.fullmatch(value.get_secret_value()):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @property
    def llm_configured(self) -> bool:
        """An API key, or a base URL of a local server that needs none."""
        return self.openai_api_key is not None or self.openai_base_url is not None

    def secret_values(self) -> list[str]:
        """Every secret this process knows, for the log redactor."""
        secrets = (
            self.telegram_bot_token,
            self.telegram_webhook_secret,
            self.openai_api_key,
            self.rag_api_key,
            self.embeddings_api_key,
            self.speech_api_key,
        )
        found = [s.get_secret_value() for s in secrets if s is not None and s.get_secret_value()]
        if self.database_url is not None:  # the URL, and its password wherever it shows
            url = self.database_url.get_secret_value()
            found += [url, *filter(None, [_password_in(url)])]
        return found


def _password_in(url: str) -> str | None:
    """The password of a `postgresql://user:password@host/db` URL or a `password=` keyword,
    for the log redactor; None when libpq cannot parse it."""
    import psycopg  # only when a database is used
    from psycopg.conninfo import conninfo_to_dict

    try:
        password = conninfo_to_dict(url).get("password")
    except psycopg.ProgrammingError:
        return None
    return str(password) if password else None


def environment_with(env_file: Path | None) -> Mapping[str, str]:
    """The process environment over the variables of `env_file` (`.env`): what `${NAME}` in
    an MCP server's runtime config reads, so its token can sit in `.env` with the others."""
    from_file = dotenv_values(env_file) if env_file is not None and env_file.is_file() else {}
    return {**{k: v for k, v in from_file.items() if v is not None}, **os.environ}
