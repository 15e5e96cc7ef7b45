"""How the Telegram channel connects and paces itself: small typed values with sane defaults."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from bot.settings import Settings

log = logging.getLogger(__name__)

TELEGRAM_API_URL = "https://api.telegram.org"


@dataclass(frozen=True)
class WebhookOptions:
    """Receive updates as HTTPS posts from Telegram (through a reverse proxy) instead of polling."""

    url: str
    """The public URL Telegram posts to; its path is the path the bot listens on."""
    listen: str = "127.0.0.1"
    port: int = 8443
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """Checked on every request; a random one per run unless set (several replicas: set it)."""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"


@dataclass(frozen=True)
class TelegramOptions:
    """Everything the channel needs that is fixed for the life of the process."""

    token: str
    inbox_path: Path
    """Received updates are kept here until handled (see `inbox.py`), in either receiving mode."""
    api_url: str = TELEGRAM_API_URL
    """Root of the Bot API server: Telegram's, or a self-hosted `telegram-bot-api`."""
    webhook: WebhookOptions | None = None
    edit_interval_seconds: float = 1.0
    """Streaming: at most one edit of the reply per interval (Telegram's per-chat pace)."""
    draft_interval_seconds: float = 0.4
    """Streaming in private chats: at most one draft of the reply per interval (the first at
    once). Drafts are no messages, so Telegram's edit pace does not bind them."""
    draft_keepalive_seconds: float = 20.0
    """Streaming in private chats: the draft is shown again after this long without new
    words (a tool call, a slow model), before Telegram lets it fade (about 30 s)."""
    draft_placeholder_seconds: float | None = 1.0
    """Streaming in private chats: with no words yet after this long, an empty draft, which
    Telegram shows as "Thinking…"; None: none."""
    typing_interval_seconds: float = 4.0
    """"typing…" lasts about 5 s in Telegram clients, so it is refreshed a little sooner."""
    typing_delay_seconds: float = 0.5
    """"typing…" is shown only once a turn has run this long without its reply going out."""
    refusal_cooldown_seconds: float = 300.0
    """A stranger is told at most once per this long."""
    shutdown_grace_seconds: float = 25.0
    """On SIGTERM, turns in progress get this long to finish before they are cancelled."""
    poll_timeout_seconds: float = 10.0
    """Long polling: how long one getUpdates waits for news."""
    group_window_seconds: float = 60.0
    """The window `telegram.groupMessagesPerMinute` counts in (Telegram's minute; shorter in
    tests)."""
    start_attempts: int = 5
    """getMe (and setWebhook) tries at start-up while the Bot API is unreachable (a bad token
    is not retried)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> TelegramOptions:
        if settings.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN is not set")
        webhook = None
        if settings.telegram_webhook_url:
            secret = settings.telegram_webhook_secret
            if secret is None and settings.database_url is not None:
                # A shared database is how several processes serve one token: each would make
                # up its own secret, and Telegram would send only the last one's.
                log.warning(
                    "[Telegram] TELEGRAM_WEBHOOK_SECRET is not set: this process makes up its "
                    "own. If several processes serve this bot, set the same secret in each, "
                    "or the webhook posts that reach the others are refused"
                )
            webhook = WebhookOptions(
                url=settings.telegram_webhook_url,
                listen=settings.telegram_webhook_listen,
                port=settings.telegram_webhook_port,
                **({"secret": secret.get_secret_value()} if secret else {}),
            )
        return cls(
            token=settings.telegram_bot_token.get_secret_value(),
            inbox_path=settings.data_dir / "telegram" / "inbox.jsonl",
            api_url=settings.telegram_api_url.rstrip("/"),
            webhook=webhook,
        )
