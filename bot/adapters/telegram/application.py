"""The bot in Telegram: python-telegram-bot's `Application` wired to the core, start to stop.

Composed by `BotApp.build` (bot/app.py), which hands in the core's entry (`handle`), the command
menu and the inbox. Updates arrive through the inbox either way: long polling by default
(`JournaledPoller`), a webhook when configured (`WebhookReceiver`); PTB's own `Updater` is never
used. At start the token is checked (getMe) and the command menu published (setMyCommands).
On stop, no new updates are taken, turns in progress get a bounded time to finish (their
sessions are saved as each turn ends), and what is still running after that is cancelled,
which also saves its session.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from telegram import Bot, BotCommand, Update
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.adapters.telegram.access import AccessGate
from bot.adapters.telegram.channel import TelegramChannel
from bot.adapters.telegram.delivery import TelegramSender
from bot.adapters.telegram.drafts import DraftPace
from bot.adapters.telegram.files import TelegramFiles, download_limit_bytes
from bot.adapters.telegram.flood_control import FloodControl
from bot.adapters.telegram.guest import GuestHandler
from bot.adapters.telegram.handlers import MessageHandlerFn, TelegramUpdateHandler
from bot.adapters.telegram.http_transport import AiohttpRequest
from bot.adapters.telegram.inbound import BotIdentity
from bot.adapters.telegram.options import TELEGRAM_API_URL, TelegramOptions, WebhookOptions
from bot.adapters.telegram.ordering import ChatOrderedProcessor
from bot.adapters.telegram.polling import JournaledPoller
from bot.adapters.telegram.send_budget import SendBudget
from bot.adapters.telegram.typing_indicator import TypingIndicators
from bot.adapters.telegram.voice_notes import VoiceNotes
from bot.adapters.telegram.voice_replies import VoiceReplies, VoiceSwitch
from bot.audio import AudioWorkers
from bot.commands import Command
from bot.config import RuntimeConfigStore
from bot.i18n import FALLBACK, Language
from bot.ports.channel import ChannelPort
from bot.ports.health import Health, HealthState
from bot.ports.inbox import TelegramInbox
from bot.ports.language import LanguagePreference
from bot.ports.speech import SpeechPort
from bot.retry import RetryPolicy
from bot.usage.meter import UsageMeter

if TYPE_CHECKING:  # aiohttp's web server, imported only for a webhook (`_receiver`)
    from bot.adapters.telegram.webhook import WebhookReceiver

log = logging.getLogger(__name__)

ALLOWED_UPDATES = [Update.MESSAGE, Update.GUEST_MESSAGE]
"""Messages, and summons where the bot is a guest (`guest.py`). Edits, reactions, member
changes... are not asked for, so Telegram does not send them."""
POLLING_FAILURES_UNREADY = 2
"""getUpdates failures in a row after which readiness says Telegram is down (one is a blip)."""
CONNECTION_POOL_SIZE = 64
"""Concurrent Bot API requests; more wait a moment for a free connection (pool time-out 10 s)."""
_MENU_NAME = re.compile(r"[a-z0-9_]{1,32}")  # what Telegram accepts in the menu


def send_budget(config: RuntimeConfigStore, group_window_seconds: float) -> SendBudget:
    """Telegram's message limits as the runtime config sets them now."""

    def limits() -> tuple[int, int]:
        telegram = config.current().telegram
        return telegram.messages_per_second, telegram.group_messages_per_minute

    return SendBudget(limits, group_window_seconds)


class StartupFailed(Exception):
    """The bot cannot start; the message is one line for the operator."""


class TelegramBot:
    """A PTB `Application` whose updates become turns of the core."""

    def __init__(
        self,
        handle: MessageHandlerFn,
        config: RuntimeConfigStore,
        menu: Callable[[], list[Command]],
        options: TelegramOptions,
        inbox: TelegramInbox,
        speech: SpeechPort,
        languages: LanguagePreference,
        voice_switch: VoiceSwitch,
        meter: UsageMeter,
        on_started: Callable[[ChannelPort], None] = lambda channel: None,
    ) -> None:
        """`menu` lists the commands published at start; `inbox` keeps received updates.
        `speech` hears voice notes and speaks answers where `voice_switch` (`/voice`) says.
        `languages`: each user's `/language`. `meter` counts transcriptions against each
        sender's daily budget. `on_started` is handed the channel once the bot can send
        (after `start`): reminders are delivered from then on."""
        self.options = options
        self._menu = menu
        self._on_started = on_started
        self._start_retry = _start_retry(options)
        self.processor = ChatOrderedProcessor(on_done=lambda update: _finished(inbox, update))
        self._audio = AudioWorkers()
        """Voice notes' and spoken answers' conversions: a pool of their own, never the
        loop's default executor that journals the inbox and saves sessions."""
        request = AiohttpRequest(connection_pool_size=CONNECTION_POOL_SIZE)
        updates_request = AiohttpRequest(connection_pool_size=1)
        flood = FloodControl(send_budget(config, options.group_window_seconds))
        self.application = _application(options, self.processor, flood, request, updates_request)
        bot = self.application.bot
        self.inbox = inbox
        self.poller, self.webhook = _receiver(options, bot, inbox, updates_request)
        self.sender = TelegramSender(bot)
        self.typing = TypingIndicators(
            self.sender, options.typing_interval_seconds, options.typing_delay_seconds
        )
        self.channel = _channel(options, self.sender, config, self.typing)
        gate = AccessGate(options.refusal_cooldown_seconds)
        files = _files(options, bot, request, config)
        self.handler = TelegramUpdateHandler(
            handle,
            self.channel,
            self.sender,
            self.typing,
            gate,
            config,
            inbox=inbox,
            files=files,
            voice_notes=VoiceNotes(files, speech, config, self._audio, meter),
            voice_replies=VoiceReplies(speech, self.sender, config, voice_switch, self._audio),
            languages=languages,
        )
        guests = GuestHandler(handle, self.sender, self.channel, gate, config, inbox, languages)
        self.application.add_handler(MessageHandler(filters.UpdateType.GUEST_MESSAGE, guests))
        self.application.add_handler(TypeHandler(Update, self.handler))
        self.application.add_error_handler(_log_update_error)
        self._receiving = False

    async def start(self) -> None:
        """Check the token, publish the menu, start taking updates. Raises `StartupFailed`."""
        await self._initialize()
        bot = self.application.bot
        self.handler.me = BotIdentity(bot.id, bot.username)
        await self._publish_menu()
        await self.application.start()
        webhook = self.options.webhook
        await self.inbox.open(self._deliver)  # what is left from before a stop comes first
        try:
            if self.poller is not None:
                await self.poller.start()
            if webhook is not None and self.webhook is not None:
                await self.webhook.start(webhook.listen, webhook.port)
                await self._set_webhook(webhook)
        except TelegramError as exc:
            await self.stop()
            raise StartupFailed(f"Telegram: could not start receiving messages: {exc}") from None
        self._receiving = True
        mode = "long polling" if webhook is None else f"webhook on {webhook.listen}:{webhook.port}"
        log.info("[Telegram] @%s is answering (%s)", bot.username, mode)
        self._on_started(self.channel)

    async def stop(self) -> None:
        """Stop taking updates, let turns in progress finish (bounded), then close."""
        self._receiving = False
        app = self.application
        if self.poller is not None:
            await self.poller.stop()
        if self.webhook is not None:
            await self.webhook.stop()
        if app.running:
            busy = self.processor.in_progress
            if busy:
                log.info("[Telegram] stopping: waiting for %d message(s) in progress", busy)
            stopping = asyncio.create_task(app.stop())
            await asyncio.wait({stopping}, timeout=self.options.shutdown_grace_seconds)
            while not stopping.done():
                cancelled = self.processor.cancel_all()
                log.warning(
                    "[Telegram] %d message(s) still in progress after %gs; cancelled",
                    cancelled,
                    self.options.shutdown_grace_seconds,
                )
                await asyncio.wait({stopping}, timeout=1.0)
            await stopping
        await self.inbox.close()  # after the turns: another process may take their chats now
        self._audio.close()
        await app.shutdown()
        log.info("[Telegram] stopped")

    async def _deliver(self, data: dict[str, Any]) -> None:
        """An update the inbox hands this process: parsed, and queued for PTB."""
        try:
            update = Update.de_json(data, self.application.bot)
        except Exception as exc:  # Telegram's JSON that PTB cannot read: skipped, not replayed
            log.error("[Telegram] update %s could not be read; skipped: %s", data["update_id"], exc)
            await self.inbox.finished(data["update_id"])
            return
        await self.application.update_queue.put(update)

    async def health(self) -> Health:
        """Readiness (`/readyz`): whether updates are coming in, from what the poller or the
        webhook receiver already knows (no request to Telegram)."""
        if not self._receiving:
            return Health(HealthState.DOWN, "not receiving updates (starting or stopping)")
        if self.poller is None:
            return Health(HealthState.OK, "webhook receiver listening")
        if not self.poller.polling:
            return Health(HealthState.DOWN, "long polling stopped (see the log)")
        if self.poller.failures >= POLLING_FAILURES_UNREADY:
            return Health(
                HealthState.DOWN, f"getUpdates failed {self.poller.failures} times in a row"
            )
        return Health(HealthState.OK, "long polling")

    async def run_until_signalled(self) -> None:
        """Start, answer until SIGINT or SIGTERM, then stop cleanly."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await self.start()
            await stop.wait()
            log.info("[Telegram] signal received, shutting down")
            await self.stop()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    async def _initialize(self) -> None:
        try:
            await self._start_retry.call(self.application.initialize)
        except InvalidToken:
            await self.application.bot.shutdown()
            raise StartupFailed(_bad_token_message(self.options.api_url)) from None
        except NetworkError as exc:
            await self.application.bot.shutdown()
            raise StartupFailed(
                f"Telegram: cannot reach the Bot API at {self.options.api_url} "
                f"after {self.options.start_attempts} attempts: {exc}"
            ) from None

    async def _set_webhook(self, webhook: WebhookOptions) -> None:
        await self._start_retry.call(
            lambda: self.application.bot.set_webhook(
                url=webhook.url,
                secret_token=webhook.secret,
                allowed_updates=ALLOWED_UPDATES,
                # One post at a time: Telegram sends the next update only once the last
                # is confirmed (one fsync into the inbox), so a chat's messages keep order.
                max_connections=1,
            )
        )

    async def _publish_menu(self) -> None:
        """One menu per language the bot speaks: the fallback's for every user, and each
        other's for the users whose app is set to it (`language_code`)."""
        for language in Language:
            menu = [
                BotCommand(c.name, c.description_in(language))
                for c in self._menu()
                if _MENU_NAME.fullmatch(c.name) and 1 <= len(c.description_in(language)) <= 256
            ]
            code = None if language is FALLBACK else language.value
            try:
                await self.application.bot.set_my_commands(menu, language_code=code)
            except TelegramError as exc:  # the bot works without a menu; say so and go on
                log.warning("[Telegram] could not publish the %s command menu: %s", language, exc)


def _start_retry(options: TelegramOptions) -> RetryPolicy:
    """How `start` retries the Bot API at start: a network error only (a bad token is not
    retried), `options.start_attempts` times."""
    return RetryPolicy(
        "[Telegram]",
        lambda error: isinstance(error, NetworkError),
        attempts=options.start_attempts,
        first_wait_seconds=2.0,
        max_wait_seconds=10.0,
        jitter=False,
    )


def _receiver(
    options: TelegramOptions, bot: Bot, inbox: TelegramInbox, request: AiohttpRequest
) -> tuple[JournaledPoller | None, WebhookReceiver | None]:
    """What fetches updates into the inbox: the webhook receiver when `options.webhook` is set,
    else the long-polling poller (on its own `request`, one connection)."""
    if options.webhook is not None:
        from bot.adapters.telegram.webhook import WebhookReceiver  # aiohttp's server: 1.8 MB

        return None, WebhookReceiver(options.webhook.path, options.webhook.secret, inbox.take)
    poller = JournaledPoller(bot, inbox, options.poll_timeout_seconds, ALLOWED_UPDATES, request)
    return poller, None


def _channel(
    options: TelegramOptions,
    sender: TelegramSender,
    config: RuntimeConfigStore,
    typing: TypingIndicators,
) -> TelegramChannel:
    """The core's `ChannelPort` in Telegram: answers streamed as edits or drafts, paced as
    `options` say."""
    pace = DraftPace(
        options.draft_interval_seconds,
        options.draft_keepalive_seconds,
        options.draft_placeholder_seconds,
    )
    return TelegramChannel(sender, config, typing, options.edit_interval_seconds, pace)


def _files(
    options: TelegramOptions, bot: Bot, request: AiohttpRequest, config: RuntimeConfigStore
) -> TelegramFiles:
    """Downloads of what users send, up to the size the Bot API server at `options.api_url`
    allows and the runtime config's `telegram.maxFileMegabytes`."""
    return TelegramFiles(
        bot,
        request,
        lambda: download_limit_bytes(options.api_url, config.current().telegram.max_file_megabytes),
    )


def _application(
    options: TelegramOptions,
    processor: ChatOrderedProcessor,
    flood: FloodControl,
    request: AiohttpRequest,
    updates_request: AiohttpRequest,
) -> Application:
    """PTB's `Application`, without its `Updater`: our poller or webhook receiver fetches,
    through the inbox."""
    return (
        ApplicationBuilder()
        .token(options.token)
        .base_url(f"{options.api_url}/bot")
        .base_file_url(f"{options.api_url}/file/bot")
        .concurrent_updates(processor)
        .rate_limiter(flood)
        .request(request)
        .get_updates_request(updates_request)
        .updater(None)
        .build()
    )


async def _finished(inbox: TelegramInbox, update: object) -> None:
    """An update handled to the end is done in the inbox (PTB's processor sees `object`)."""
    assert isinstance(update, Update)
    await inbox.finished(update.update_id)


def _bad_token_message(api_url: str) -> str:
    where = "" if api_url == TELEGRAM_API_URL else f" (or {api_url} is no Bot API server)"
    return (
        f"Telegram rejected the bot token{where}. Check TELEGRAM_BOT_TOKEN: get it from "
        "@BotFather; it looks like 123456789:AAE..."
    )


async def _log_update_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    log.error("[Telegram] handling an update failed: %s", context.error, exc_info=context.error)
