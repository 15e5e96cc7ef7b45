"""An emulated Telegram Bot API server on 127.0.0.1, for tests, benchmarks and system tests.

It speaks the Bot API's real JSON shapes (`{"ok": true, "result": ...}`, dates in seconds,
`is_bot` users, long polling with offsets, 409 conflicts, `parameters.retry_after` on 429), so
python-telegram-bot talks to it unchanged: point the bot's `TELEGRAM_API_URL` at `api_url`.
It runs its own event loop on a daemon thread, so in-process tests, benchmarks and a bot
started as a separate process can all use it.

Tests act as Telegram users (`send_text`, `send_media`, `edit_text`, `create_topic`, and
`summon_guest` to mention the bot where it is no member: Bot API 10.0's guest mode), look at
what the bot sent (`messages`, `texts`, `calls`, `guest_answers`), and script faults (`fail`,
`reject_entities`, `expire_guest_query`), or send an update again (`redeliver`).
Media sent with `content` can be fetched like Telegram's own: `getFile`, then
`/file/bot<token>/<file_path>` (`downloads` counts fetches); like Telegram's cloud API, getFile
refuses files over 20 MB.
Like Telegram, it rejects what Telegram rejects: empty or over-long texts, entities outside the
text, edits that change nothing, edits of unknown messages, unknown chats, a guest query
answered twice or after it expired.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

from tests.fakes.background_server import BackgroundServer

DEFAULT_TOKEN = "123456789:TEST-token_for-the-emulator"
CLOUD_DOWNLOAD_LIMIT = 20_000_000
TEXT_LIMIT = 4096
ENTITY_TYPES = frozenset(
    "mention hashtag cashtag bot_command url email phone_number bold italic underline "
    "strikethrough spoiler blockquote expandable_blockquote code pre text_link text_mention "
    "custom_emoji date_time".split()
)
# PTB sends form fields; these carry JSON, every other field is a plain string.
_JSON_FIELDS = frozenset(
    "chat_id message_id message_thread_id entities caption_entities reply_parameters "
    "reply_to_message_id offset limit timeout allowed_updates commands scope "
    "drop_pending_updates max_connections link_preview_options disable_notification "
    "protect_content allow_sending_without_reply draft_id result".split()
)
_COMMAND = re.compile(r"^/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]+)?")
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9_]{5,32}")
_CHAT_ACTIONS = frozenset({"typing", "upload_photo", "upload_document", "record_voice"})
GUEST_QUERY_INVALID = (
    "Bad Request: query is too old and response timeout expired or query ID is invalid"
)
"""Telegram's answer to `answerGuestQuery` for an expired, answered or unknown query."""
ANY = object()
"""`messages(thread_id=ANY)`: messages of every topic."""


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def entity_problem(text: str, entities: list[dict[str, Any]]) -> str | None:
    """Why Telegram would refuse these entities for this text, or None when they are fine."""
    size = utf16_len(text)
    for entity in entities:
        kind, offset, length = entity.get("type"), entity.get("offset"), entity.get("length")
        if kind not in ENTITY_TYPES:
            return f"unsupported entity type {kind!r}"
        if not isinstance(offset, int) or not isinstance(length, int):
            return "entity offset and length must be integers"
        if offset < 0 or length <= 0 or offset + length > size:
            return f"entity {kind} at {offset}+{length} is outside the text ({size} units)"
        if kind == "text_link" and not entity.get("url"):
            return "text_link without url"
    return None


@dataclass(frozen=True)
class User:
    """A Telegram user the tests act as."""

    id: int
    first_name: str = "Test"
    username: str | None = None
    is_bot: bool = False
    language_code: str | None = "en"
    """The language the user's Telegram app is set to; None: Telegram does not say."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        if not self.is_bot and self.language_code:
            data["language_code"] = self.language_code
        return data


@dataclass(frozen=True)
class Chat:
    """A private chat, a group, or a supergroup (a forum when `is_forum`)."""

    id: int
    type: str = "private"
    title: str | None = None
    is_forum: bool = False
    first_name: str | None = None

    @classmethod
    def private_with(cls, user: User) -> Chat:
        return cls(id=user.id, type="private", first_name=user.first_name)

    @classmethod
    def group(cls, chat_id: int, title: str = "Test group", forum: bool = False) -> Chat:
        return cls(id=chat_id, type="supergroup", title=title, is_forum=forum)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            data["title"] = self.title
        if self.first_name:
            data["first_name"] = self.first_name
        if self.is_forum:
            data["is_forum"] = True
        return data


@dataclass
class SentMessage:
    """A message the bot sent, as it stands now; `history` holds every text it showed."""

    chat_id: int
    message_id: int
    text: str
    entities: list[dict[str, Any]]
    thread_id: int | None
    reply_to: int | None
    sent_at: float
    history: list[str] = field(default_factory=list)
    deleted: bool = False
    voice: bytes | None = None
    """A voice note's audio as uploaded (sendVoice); its `text` is empty then."""
    voice_duration: int | None = None
    guest_query_id: str | None = None
    """Posted as the answer to this guest query (`answerGuestQuery`), not by `sendMessage`."""

    @property
    def edits(self) -> int:
        return len(self.history) - 1

    def entity_texts(self, kind: str) -> list[str]:
        """The text each entity of `kind` covers (offsets are UTF-16, as Telegram counts)."""
        encoded = self.text.encode("utf-16-le", "surrogatepass")
        return [
            encoded[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
            for e in self.entities
            if e["type"] == kind
        ]


@dataclass(frozen=True)
class Draft:
    """One `sendMessageDraft`: what the user saw while the answer was written (ephemeral)."""

    chat_id: int
    draft_id: int
    text: str
    at: float


@dataclass(frozen=True)
class ApiCall:
    """One request the bot made: method, decoded parameters, when (monotonic), HTTP status."""

    method: str
    params: dict[str, Any]
    at: float
    status: int


@dataclass
class GuestQuery:
    """A summons of the bot where it is no member: answerable once, until it expires."""

    query_id: str
    chat: Chat
    thread_id: int | None
    at: float
    answered: bool = False
    expired: bool = False
    update_id: int = 0
    """The `guest_message` update that carried it (`redeliver` sends it again)."""


@dataclass
class Fault:
    """A scripted failure: the next `times` calls of `method` (matching `when`) fail so."""

    method: str
    status: int = 500
    description: str = "Internal Server Error"
    retry_after: int | None = None
    times: int = 1
    when: Callable[[dict[str, Any]], bool] | None = None
    delay: float = 0.0
    hang_up: bool = False
    """Close the connection without an answer (after `delay`), as a dropped network does:
    with `status` 200 the request is carried out first, so the client cannot tell it was."""


@dataclass(frozen=True)
class StoredFile:
    """A file a user sent: what getFile reports and what the download serves."""

    file_id: str
    path: str
    content: bytes
    claimed_size: int


class ApiError(Exception):
    def __init__(self, status: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.retry_after = retry_after


class FakeTelegramServer(BackgroundServer):
    """Start with `with FakeTelegramServer() as telegram:`; the bot's API root is `api_url`."""

    name = "fake-telegram"

    def __init__(
        self, token: str = DEFAULT_TOKEN, bot_username: str = "memory_test_bot", port: int = 0
    ) -> None:
        super().__init__(port)
        self.token = token
        self.bot = User(int(token.split(":")[0]), "Memory Bot", bot_username, is_bot=True)
        self._lock = threading.RLock()
        self._chats: dict[int, Chat] = {}
        self._users: set[int] = set()
        """Everyone who wrote anywhere: the bot may write to them in private only once they
        have written to it there (a chat in `_chats`), as Telegram allows."""
        self._topics: dict[tuple[int, int], str] = {}
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._sent: list[SentMessage] = []
        self._sent_index: dict[tuple[int, int], SentMessage] = {}
        self._pending: list[dict[str, Any]] = []
        self._delivered: dict[int, dict[str, Any]] = {}
        """Every update queued, by id: `redeliver` sends one again."""
        self._update_ids = itertools.count(100_000)
        self._guest_queries: dict[str, GuestQuery] = {}
        self._guest_query_ids = itertools.count(1)
        self.guest_query_seconds: float | None = None
        """How long a guest query can be answered; None: no limit (`expire_guest_query`)."""
        self._calls: list[ApiCall] = []
        self._faults: list[Fault] = []
        self._entity_rules: list[Callable[[list[dict[str, Any]]], bool]] = []
        self._files: dict[str, StoredFile] = {}
        self._file_ids = itertools.count(1)
        self.downloads: list[str] = []
        """file_ids whose bytes the bot fetched, in order."""
        self.commands: list[dict[str, Any]] = []
        """The command menu for every user (setMyCommands without a language)."""
        self.commands_by_language: dict[str, list[dict[str, Any]]] = {}
        """Menus for the users of one app language (setMyCommands with `language_code`)."""
        self.drafts: list[Draft] = []
        self._arrivals: dict[str, int] = {}
        self.offers_drafts = True
        """False: answer `sendMessageDraft` as a Bot API server without it does (404)."""
        self.webhook_url: str | None = None
        self.webhook_secret: str | None = None
        self._allowed_updates: list[str] | None = None
        self._poll_generation = 0
        self._news: asyncio.Event | None = None
        self._delivery: asyncio.Task[None] | None = None
        self._stopping = False

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        """What the bot's TELEGRAM_API_URL is set to."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        self._news = asyncio.Event()
        app.router.add_route("*", "/bot{token}/{method}", self._dispatch)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)

    async def on_stop(self) -> None:
        self._stopping = True  # long polls in progress answer now, not at their time-out
        if self._news is not None:
            self._news.set()
        if self._delivery is not None:
            self._delivery.cancel()

    # -- acting as Telegram users ----------------------------------------------------------
    def send_text(
        self,
        user: User,
        text: str,
        chat: Chat | None = None,
        thread_id: int | None = None,
        reply_to: int | None = None,
    ) -> int:
        """`user` writes `text` (commands and @mentions get their entities); its message id."""
        payload: dict[str, Any] = {"text": text}
        entities = _auto_entities(text)
        if entities:
            payload["entities"] = entities
        return self._user_message(user, chat, payload, thread_id, reply_to)

    def send_media(
        self,
        user: User,
        kind: str,
        caption: str | None = None,
        chat: Chat | None = None,
        thread_id: int | None = None,
        content: bytes | None = None,
        claimed_size: int | None = None,
        reply_to: int | None = None,
        **fields: Any,
    ) -> int:
        """`user` sends a photo, sticker, voice, video note, document, video, audio or location.

        With `content` the file can be downloaded; `claimed_size` is the size Telegram states
        (the content's by default); `fields` override the media's own (`mime_type`...).
        """
        media = _media_payload(kind)
        if content is not None or claimed_size is not None:
            file = self.add_file(content or b"", kind, claimed_size)
            target = media[-1] if isinstance(media, list) else media
            target.update(
                file_id=file.file_id, file_unique_id=file.file_id, file_size=file.claimed_size
            )
        target = media[-1] if isinstance(media, list) else media
        target.update(fields)
        payload = {kind: media}
        if caption is not None:
            payload["caption"] = caption
            entities = _auto_entities(caption)
            if entities:
                payload["caption_entities"] = entities
        return self._user_message(user, chat, payload, thread_id, reply_to)

    def add_file(self, content: bytes, kind: str = "document", claimed_size: int | None = None):
        """A file on the emulated servers, as if a user had uploaded it."""
        number = next(self._file_ids)
        file = StoredFile(
            file_id=f"{kind}-{number}",
            path=f"{kind}s/file_{number}",
            content=content,
            claimed_size=len(content) if claimed_size is None else claimed_size,
        )
        with self._lock:
            self._files[file.file_id] = file
        return file

    def edit_text(self, user: User, message_id: int, text: str, chat: Chat | None = None) -> None:
        """`user` edits an earlier message: an `edited_message` update."""
        chat = chat or Chat.private_with(user)
        with self._lock:
            message = dict(self._messages[(chat.id, message_id)])
            message.update(text=text, edit_date=int(time.time()))
        self.inject_update({"edited_message": message})

    def create_topic(self, chat: Chat, name: str, creator: User) -> int:
        """A forum topic in `chat`; its `message_thread_id`."""
        with self._lock:
            self._chats[chat.id] = chat
            thread_id = self._next_message_id(chat.id)
            self._topics[(chat.id, thread_id)] = name
            self._messages[(chat.id, thread_id)] = {
                "message_id": thread_id,
                "from": creator.to_json(),
                "chat": chat.to_json(),
                "date": int(time.time()),
                "message_thread_id": thread_id,
                "forum_topic_created": {"name": name, "icon_color": 7322096},
            }
        return thread_id

    def chat_exists(self, chat: Chat) -> None:
        """A chat the bot may write to, as after its user wrote to it long ago (no update)."""
        with self._lock:
            self._chats[chat.id] = chat

    def bot_message_exists(self, chat: Chat, text: str) -> int:
        """Record a message as if the bot had sent it earlier (to reply to it); its id."""
        with self._lock:
            self._chats[chat.id] = chat
            message_id = self._next_message_id(chat.id)
            message = self._bot_message_json(chat, message_id, text, [], None, None)
            self._messages[(chat.id, message_id)] = message
        return message_id

    def summon_guest(self, user: User, text: str, chat: Chat, thread_id: int | None = None) -> str:
        """`user` mentions the bot in `chat`, which the bot is no member of (it cannot write
        there with sendMessage): a `guest_message` update; returns its `guest_query_id`."""
        query_id = f"guest-{next(self._guest_query_ids)}"
        with self._lock:
            self._users.add(user.id)
            message_id = self._next_message_id(chat.id)
            self._guest_queries[query_id] = GuestQuery(query_id, chat, thread_id, time.monotonic())
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": user.to_json(),
            "chat": chat.to_json(),
            "date": int(time.time()),
            "text": text,
            "guest_query_id": query_id,
        }
        entities = _auto_entities(text)
        if entities:
            message["entities"] = entities
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            if chat.is_forum:
                message["is_topic_message"] = True
        update_id = self.inject_update({"guest_message": message})
        with self._lock:
            self._guest_queries[query_id].update_id = update_id
        return query_id

    def guest_query(self, query_id: str) -> GuestQuery:
        with self._lock:
            return self._guest_queries[query_id]

    def expire_guest_query(self, query_id: str) -> None:
        """From now on the query cannot be answered, as after Telegram's response time-out."""
        with self._lock:
            self._guest_queries[query_id].expired = True

    def guest_answers(self, query_id: str | None = None) -> list[SentMessage]:
        """What the bot posted as answers to guest queries (to `query_id` only, if given)."""
        with self._lock:
            return [
                m
                for m in self._sent
                if m.guest_query_id is not None
                and (query_id is None or m.guest_query_id == query_id)
            ]

    def redeliver(self, update_id: int) -> None:
        """Send an update again, as Telegram does when it missed the bot's confirmation."""
        with self._lock:
            self._pending.append(dict(self._delivered[update_id]))
        self._wake()

    def inject_update(self, update: dict[str, Any]) -> int:
        """Queue any update (its `update_id` is assigned here); returns that id."""
        with self._lock:
            update_id = next(self._update_ids)
            self._pending.append({"update_id": update_id, **update})
            self._delivered[update_id] = {"update_id": update_id, **update}
        self._wake()
        return update_id

    # -- what the bot did ------------------------------------------------------------------
    def messages(
        self, chat_id: int | None = None, thread_id: object = ANY, include_deleted: bool = False
    ) -> list[SentMessage]:
        """Messages the bot sent, in the order sent, as they stand now."""
        with self._lock:
            return [
                m
                for m in self._sent
                if (chat_id is None or m.chat_id == chat_id)
                and (thread_id is ANY or m.thread_id == thread_id)
                and (include_deleted or not m.deleted)
            ]

    def texts(self, chat_id: int | None = None, thread_id: object = ANY) -> list[str]:
        return [m.text for m in self.messages(chat_id, thread_id)]

    def arrivals(self, method: str) -> int:
        """Requests of `method` that reached the server, finished with or not (`calls`)."""
        with self._lock:
            return self._arrivals.get(method, 0)

    def calls(self, method: str | None = None) -> list[ApiCall]:
        with self._lock:
            return [c for c in self._calls if method is None or c.method == method]

    def chat_actions(self, chat_id: int) -> list[ApiCall]:
        return [c for c in self.calls("sendChatAction") if c.params.get("chat_id") == chat_id]

    @property
    def pending_updates(self) -> int:
        with self._lock:
            return len(self._pending)

    def queued_updates(self) -> list[dict[str, Any]]:
        """Updates not yet confirmed by the bot (works without `start()`, for unit tests)."""
        with self._lock:
            return [dict(update) for update in self._pending]

    async def wait_for(self, condition: Callable[[], bool], within: float = 15.0) -> None:
        """Wait, in an async test, until `condition()` holds; fail after `within` seconds."""
        deadline = time.monotonic() + within
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {within}s waiting for the bot")
            await asyncio.sleep(0.02)

    def wait_for_sync(self, condition: Callable[[], bool], within: float = 15.0) -> None:
        """`wait_for` for tests that drive the bot as a separate process."""
        deadline = time.monotonic() + within
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {within}s waiting for the bot")
            time.sleep(0.02)

    # -- faults ----------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        status: int = 500,
        description: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
        delay: float = 0.0,
        hang_up: bool = False,
    ) -> None:
        """Make the next `times` calls of `method` ("*" for any) fail with `status` (200 with
        a `delay`: only slow; `hang_up`: no answer at all, see `Fault.hang_up`)."""
        if description is None:
            description = _DEFAULT_DESCRIPTIONS.get(status, "Internal Server Error")
        fault = Fault(method, status, description, retry_after, times, when, delay, hang_up)
        with self._lock:
            self._faults.append(fault)

    def flood_wait(self, method: str, retry_after: int, times: int = 1) -> None:
        """429 with `parameters.retry_after`, as Telegram answers a flood."""
        self.fail(method, 429, f"Too Many Requests: retry after {retry_after}", retry_after, times)

    def reject_entities(self, rule: Callable[[list[dict[str, Any]]], bool]) -> None:
        """From now on refuse sends and edits whose entities match `rule` (can't parse)."""
        with self._lock:
            self._entity_rules.append(rule)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._entity_rules.clear()

    # -- HTTP ------------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        with self._lock:
            self._arrivals[method] = self._arrivals.get(method, 0) + 1
        try:
            params = await _params(request)
        except ConnectionResetError:  # the client gave up mid-request, as clients do
            return web.Response(status=499)
        if request.match_info["token"] != self.token:
            return self._answer(method, params, ApiError(401, "Unauthorized"))
        try:
            fault = self._take_fault(method, params)
            if fault is not None:
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                if fault.hang_up and fault.status != 200:
                    return self._hang_up(request, method, params)
                if fault.status != 200:
                    raise ApiError(fault.status, fault.description, fault.retry_after)
            handler = self._methods().get(method)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            result = await handler(params)
        except ApiError as error:
            return self._answer(method, params, error)
        if fault is not None and fault.hang_up:
            return self._hang_up(request, method, params)
        return self._answer(method, params, result)

    def _hang_up(self, request: web.Request, method: str, params: dict[str, Any]) -> web.Response:
        with self._lock:
            self._calls.append(ApiCall(method, params, time.monotonic(), 0))
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=499)  # never reaches the client

    def _answer(self, method: str, params: dict[str, Any], outcome: object) -> web.Response:
        if isinstance(outcome, ApiError):
            body: dict[str, Any] = {
                "ok": False,
                "error_code": outcome.status,
                "description": outcome.description,
            }
            if outcome.retry_after is not None:
                body["parameters"] = {"retry_after": outcome.retry_after}
            status = outcome.status
        else:
            body, status = {"ok": True, "result": outcome}, 200
        with self._lock:
            self._calls.append(ApiCall(method, params, time.monotonic(), status))
        return web.json_response(body, status=status)

    def _take_fault(self, method: str, params: dict[str, Any]) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method in (method, "*") and (fault.when is None or fault.when(params)):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {
            "getMe": self._get_me,
            "getUpdates": self._get_updates,
            "setWebhook": self._set_webhook,
            "deleteWebhook": self._delete_webhook,
            "getWebhookInfo": self._get_webhook_info,
            "setMyCommands": self._set_my_commands,
            "getMyCommands": self._get_my_commands,
            "deleteMyCommands": self._delete_my_commands,
            "sendMessage": self._send_message,
            "sendMessageDraft": self._send_message_draft,
            "editMessageText": self._edit_message_text,
            "deleteMessage": self._delete_message,
            "sendChatAction": self._send_chat_action,
            "getChat": self._get_chat,
            "getFile": self._get_file,
            "sendVoice": self._send_voice,
            "answerGuestQuery": self._answer_guest_query,
            "close": self._true,
            "logOut": self._true,
        }

    # -- Bot API methods -------------------------------------------------------------------
    async def _true(self, params: dict[str, Any]) -> bool:
        return True

    async def _get_me(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.bot.to_json(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
            "supports_guest_queries": True,
        }

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook_url:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        assert self._news is not None
        with self._lock:
            self._poll_generation += 1
            generation = self._poll_generation
            if params.get("allowed_updates") is not None:
                self._allowed_updates = list(params["allowed_updates"])
        offset = int(params.get("offset") or 0)
        limit = max(1, min(100, int(params.get("limit") or 100)))
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        while True:
            self._news.clear()
            with self._lock:
                if generation != self._poll_generation:
                    raise ApiError(
                        409,
                        "Conflict: terminated by other getUpdates request; make sure that "
                        "only one bot instance is running",
                    )
                batch = self._confirm_and_peek(offset, limit)
            remaining = deadline - time.monotonic()
            if batch or remaining <= 0 or self._stopping:
                return batch
            try:
                await asyncio.wait_for(self._news.wait(), remaining)
            except TimeoutError:
                pass

    def _confirm_and_peek(self, offset: int, limit: int) -> list[dict[str, Any]]:
        if offset:
            self._pending = [u for u in self._pending if u["update_id"] >= offset]
        allowed = self._allowed_updates
        if allowed:  # Telegram drops what the bot did not ask for
            self._pending = [u for u in self._pending if _update_type(u) in allowed]
        return self._pending[:limit]

    async def _set_webhook(self, params: dict[str, Any]) -> bool:
        with self._lock:
            self.webhook_url = params["url"] or None
            self.webhook_secret = params.get("secret_token")
            if params.get("allowed_updates") is not None:
                self._allowed_updates = list(params["allowed_updates"])
            if params.get("drop_pending_updates"):
                self._pending.clear()
        if self.webhook_url and (self._delivery is None or self._delivery.done()):
            self._delivery = asyncio.create_task(self._deliver_to_webhook())
        return True

    async def _delete_webhook(self, params: dict[str, Any]) -> bool:
        with self._lock:
            self.webhook_url = None
            if params.get("drop_pending_updates"):
                self._pending.clear()
        self._wake()
        return True

    async def _get_webhook_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            return {
                "url": self.webhook_url or "",
                "has_custom_certificate": False,
                "pending_update_count": len(self._pending),
            }

    async def _set_my_commands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands") or []
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        language = params.get("language_code") or ""
        if language and not re.fullmatch(r"[a-z]{2}", language):
            raise ApiError(400, "Bad Request: invalid language code specified")
        if language:
            self.commands_by_language[language] = list(commands)
        else:
            self.commands = list(commands)
        return True

    async def _get_my_commands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        language = params.get("language_code") or ""
        return list(self.commands_by_language.get(language, []) if language else self.commands)

    async def _delete_my_commands(self, params: dict[str, Any]) -> bool:
        language = params.get("language_code") or ""
        if language:
            self.commands_by_language.pop(language, None)
        else:
            self.commands = []
        return True

    async def _get_chat(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._chat(params.get("chat_id")).to_json()

    async def _send_chat_action(self, params: dict[str, Any]) -> bool:
        self._chat(params.get("chat_id"))
        if params.get("action") not in {
            "typing",
            "upload_photo",
            "upload_document",
            "record_voice",
        }:
            raise ApiError(400, "Bad Request: wrong parameter action in request")
        return True

    async def _get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            file = self._files.get(str(params.get("file_id")))
        if file is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        if file.claimed_size > CLOUD_DOWNLOAD_LIMIT:
            raise ApiError(400, "Bad Request: file is too big")
        return {
            "file_id": file.file_id,
            "file_unique_id": file.file_id,
            "file_size": file.claimed_size,
            "file_path": file.path,
        }

    async def _send_voice(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        audio = params.get("voice")
        if not isinstance(audio, bytes) or not audio:
            raise ApiError(400, "Bad Request: there is no voice in the request")
        duration = int(params.get("duration") or 0)
        thread_id = params.get("message_thread_id")
        reply = params.get("reply_parameters") or {}
        reply_to = reply.get("message_id")
        with self._lock:
            message_id = self._next_message_id(chat.id)
            message = self._bot_message_json(chat, message_id, "", [], thread_id, None)
            del message["text"]
            file = self.add_file(audio, "voice")
            message["voice"] = {
                "file_id": file.file_id,
                "file_unique_id": file.file_id,
                "duration": duration,
                "mime_type": "audio/ogg",
                "file_size": len(audio),
            }
            self._messages[(chat.id, message_id)] = message
            sent = SentMessage(
                chat.id, message_id, "", [], thread_id, reply_to, time.monotonic(), [""]
            )
            sent.voice, sent.voice_duration = audio, duration
            self._sent.append(sent)
            self._sent_index[(chat.id, message_id)] = sent
        return message

    async def _download(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        with self._lock:
            file = next(
                (f for f in self._files.values() if f.path == request.match_info["path"]), None
            )
            if file is not None:
                self.downloads.append(file.file_id)
        if file is None:
            return web.Response(status=404)
        return web.Response(body=file.content, content_type="application/octet-stream")

    async def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        text = str(params.get("text", ""))
        entities = list(params.get("entities") or [])
        self._check_text(text, entities)
        thread_id = params.get("message_thread_id")
        if thread_id is not None and chat.is_forum and (chat.id, thread_id) not in self._topics:
            raise ApiError(400, "Bad Request: message thread not found")
        reply = params.get("reply_parameters") or {}
        reply_to = reply.get("message_id") or params.get("reply_to_message_id")
        with self._lock:
            if reply_to and (chat.id, reply_to) not in self._messages:
                if not reply.get("allow_sending_without_reply"):
                    raise ApiError(400, "Bad Request: message to be replied not found")
                reply_to = None
            message_id = self._next_message_id(chat.id)
            message = self._bot_message_json(chat, message_id, text, entities, thread_id, reply_to)
            self._messages[(chat.id, message_id)] = message
            sent = SentMessage(
                chat.id, message_id, text, entities, thread_id, reply_to, time.monotonic(), [text]
            )
            self._sent.append(sent)
            self._sent_index[(chat.id, message_id)] = sent
        return message

    async def _answer_guest_query(self, params: dict[str, Any]) -> dict[str, Any]:
        """As Bot API 10.0: one answer per query, within its time; the result an inline query
        result whose message is posted in the chat the bot was summoned to."""
        query_id = str(params.get("guest_query_id") or "")
        result = params.get("result")
        if not isinstance(result, dict) or not result.get("id") or not result.get("type"):
            raise ApiError(400, "Bad Request: result must be an InlineQueryResult")
        content = result.get("input_message_content") or {}
        if result["type"] != "article" or not content.get("message_text"):
            raise ApiError(400, "Bad Request: only text articles are emulated")
        text, entities = str(content["message_text"]), list(content.get("entities") or [])
        self._check_text(text, entities)
        with self._lock:
            query = self._guest_queries.get(query_id)
            limit = self.guest_query_seconds
            if (
                query is None
                or query.answered
                or query.expired
                or (limit is not None and time.monotonic() - query.at > limit)
            ):
                raise ApiError(400, GUEST_QUERY_INVALID)
            query.answered = True
            chat = query.chat
            message_id = self._next_message_id(chat.id)
            sent = SentMessage(
                chat.id, message_id, text, entities, query.thread_id, None, time.monotonic(),
                [text], guest_query_id=query_id,
            )  # fmt: skip
            self._sent.append(sent)
            self._sent_index[(chat.id, message_id)] = sent
        return {"inline_message_id": f"inline-{query_id}"}

    async def _send_message_draft(self, params: dict[str, Any]) -> bool:
        """As Bot API 9.3+: private chats only, a non-zero draft id, the text checked like a
        message's (an empty text shows "Thinking…")."""
        if not self.offers_drafts:
            raise ApiError(404, "Not Found: method not found")
        chat = self._chat(params.get("chat_id"))
        if chat.type != "private":
            raise ApiError(400, "Bad Request: TEXTDRAFT_PEER_INVALID")
        draft_id = params.get("draft_id")
        if not isinstance(draft_id, int) or draft_id == 0:
            raise ApiError(400, "Bad Request: draft_id must be non-zero")
        text = str(params.get("text") or "")
        if text:
            self._check_text(text, list(params.get("entities") or []))
        with self._lock:
            self.drafts.append(Draft(chat.id, draft_id, text, time.monotonic()))
        return True

    async def _edit_message_text(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        message_id = params.get("message_id")
        text = str(params.get("text", ""))
        entities = list(params.get("entities") or [])
        with self._lock:
            sent = self._sent_index.get((chat.id, message_id))  # type: ignore[arg-type]
            if sent is None or sent.deleted:
                raise ApiError(400, "Bad Request: message to edit not found")
            if sent.text == text and sent.entities == entities:
                raise ApiError(
                    400,
                    "Bad Request: message is not modified: specified new message content and "
                    "reply markup are exactly the same as a current content and reply markup "
                    "of the message",
                )
        self._check_text(text, entities)
        with self._lock:
            sent.text, sent.entities = text, entities
            sent.history.append(text)
            message = dict(self._messages[(chat.id, sent.message_id)])
            message.update(text=text, edit_date=int(time.time()))
            message.pop("entities", None)
            if entities:
                message["entities"] = entities
            self._messages[(chat.id, sent.message_id)] = message
        return message

    async def _delete_message(self, params: dict[str, Any]) -> bool:
        chat = self._chat(params.get("chat_id"))
        with self._lock:
            sent = self._sent_index.get((chat.id, params.get("message_id")))  # type: ignore[arg-type]
            if sent is None or sent.deleted:
                raise ApiError(400, "Bad Request: message to delete not found")
            sent.deleted = True
        return True

    # -- helpers ---------------------------------------------------------------------------
    def _check_text(self, text: str, entities: list[dict[str, Any]]) -> None:
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(text) > TEXT_LIMIT:
            raise ApiError(400, "Bad Request: message is too long")
        problem = entity_problem(text, entities)
        if problem is None and entities:
            with self._lock:
                rules = list(self._entity_rules)
            if any(rule(entities) for rule in rules):
                problem = "Can't find end of the entity starting at byte offset 0"
        if problem is not None:
            raise ApiError(400, f"Bad Request: can't parse entities: {problem}")

    def _chat(self, chat_id: object) -> Chat:
        with self._lock:
            chat = self._chats.get(chat_id) if isinstance(chat_id, int) else None
            known_user = chat_id in self._users
        if chat is None and known_user:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        return chat

    def _next_message_id(self, chat_id: int) -> int:
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return next(counter)

    def _bot_message_json(
        self,
        chat: Chat,
        message_id: int,
        text: str,
        entities: list[dict[str, Any]],
        thread_id: int | None,
        reply_to: int | None,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": self.bot.to_json(),
            "chat": chat.to_json(),
            "date": int(time.time()),
            "text": text,
        }
        if entities:
            message["entities"] = entities
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            if chat.is_forum:
                message["is_topic_message"] = True
        if reply_to:
            message["reply_to_message"] = self._messages[(chat.id, reply_to)]
        return message

    def _user_message(
        self,
        user: User,
        chat: Chat | None,
        payload: dict[str, Any],
        thread_id: int | None,
        reply_to: int | None,
    ) -> int:
        chat = chat or Chat.private_with(user)
        with self._lock:
            self._chats[chat.id] = chat
            self._users.add(user.id)
            message_id = self._next_message_id(chat.id)
            message: dict[str, Any] = {
                "message_id": message_id,
                "from": user.to_json(),
                "chat": chat.to_json(),
                "date": int(time.time()),
                **payload,
            }
            if thread_id is not None:
                message["message_thread_id"] = thread_id
                if chat.is_forum:
                    message["is_topic_message"] = True
            replied = reply_to or (thread_id if chat.is_forum else None)
            if replied is not None:
                message["reply_to_message"] = self._messages[(chat.id, replied)]
            self._messages[(chat.id, message_id)] = message
        self.inject_update({"message": message})
        return message_id

    def _wake(self) -> None:
        if self._loop is not None and self._news is not None:
            self._loop.call_soon_threadsafe(self._news.set)

    async def _deliver_to_webhook(self) -> None:
        """Post pending updates to the webhook one by one, in order, until it answers 200."""
        async with ClientSession(timeout=ClientTimeout(total=10)) as session:
            while self.webhook_url:
                with self._lock:
                    update = self._confirm_and_peek(0, 1)
                    url, secret = self.webhook_url, self.webhook_secret
                if not update or url is None:
                    await asyncio.sleep(0.02)
                    continue
                headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret else {}
                try:
                    async with session.post(url, json=update[0], headers=headers) as response:
                        delivered = response.status == 200
                except Exception:
                    delivered = False
                if delivered:
                    with self._lock:
                        self._pending = [
                            u for u in self._pending if u["update_id"] != update[0]["update_id"]
                        ]
                else:
                    await asyncio.sleep(0.1)


_DEFAULT_DESCRIPTIONS = {
    400: "Bad Request",
    403: "Forbidden: bot was blocked by the user",
    429: "Too Many Requests: retry after 1",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


async def _params(request: web.Request) -> dict[str, Any]:
    raw: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            raw.update(await request.json())
        else:
            for key, value in (await request.post()).items():
                if isinstance(value, str):
                    raw[key] = value
                elif isinstance(value, web.FileField):  # an upload: kept as bytes
                    raw[key] = value.file.read()
    params: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _JSON_FIELDS and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # `@channelusername` and other plain strings
        params[key] = value
    return params


def _update_type(update: dict[str, Any]) -> str:
    return next(key for key in update if key != "update_id")


def _auto_entities(text: str) -> list[dict[str, Any]]:
    """The entities Telegram adds by itself: a leading /command and @mentions."""
    entities = []
    command = _COMMAND.match(text)
    if command:
        entities.append({"type": "bot_command", "offset": 0, "length": utf16_len(command[0])})
    for mention in _MENTION.finditer(text):
        if command and mention.start() < command.end():
            continue
        offset = utf16_len(text[: mention.start()])
        entities.append({"type": "mention", "offset": offset, "length": utf16_len(mention[0])})
    return entities


def _media_payload(kind: str) -> Any:
    file = {"file_id": f"{kind}-file-id", "file_unique_id": f"{kind}-unique"}
    payloads: dict[str, Any] = {
        "photo": [{**file, "width": 90, "height": 90, "file_size": 1200}],
        "sticker": {
            **file,
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": "👍",
        },
        "voice": {**file, "duration": 3, "mime_type": "audio/ogg"},
        "video_note": {**file, "length": 240, "duration": 5},
        "audio": {**file, "duration": 120, "title": "song"},
        "video": {**file, "width": 640, "height": 360, "duration": 10},
        "document": {**file, "file_name": "notes.pdf", "mime_type": "application/pdf"},
        "location": {"latitude": 52.52, "longitude": 13.405},
    }
    return payloads[kind]
