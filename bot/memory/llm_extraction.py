"""Fact capture that does not depend on phrasing: one LLM call reads what the user said.

As mem0 does it: after a turn, in the background, the user's new messages and their nearest
kept items (under short aliases "1", "2", …, never real ids) go into ONE structured-output
call, which answers with operations: ADD a new fact, UPDATE an item a newer fact supersedes
("I moved to Berlin" for "The user lives in Porto"), DELETE one that is no longer true ("I'm
not vegetarian any more"), or NONE. The rules of `extraction.py` stay the zero-cost path; a
failed call stores nothing and takes nothing away from what they found.

Wiring (the composition root, `bot/app.py`): build one
`LlmFactExtractor(llm, config.current, memory)`. The memory persist system (order 50) calls
`extractor.submit(user_id, ctx.user_text, source)` when `memory.extraction` is `llm` or `both`,
and stores only the exchange, without the rules' facts, when it is `llm`. `/forget all` and
`/remember off` await `extractor.discard(user_id)` first; shutdown awaits `extractor.drain()`
before `memory.drain()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from bot.config.model import RuntimeConfig
from bot.memory.llm_operations import (
    NEAREST_ITEMS,
    Operation,
    Plan,
    extraction_request,
    parse_operations,
    plan,
)
from bot.memory.model import MemoryItem
from bot.ports.llm import LlmError, LlmPort
from bot.ports.memory import ExtractionTarget

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000
"""A longer message is cut: it bounds both the backlog and the prompt."""


@dataclass(frozen=True)
class _Message:
    text: str
    source: str


@dataclass
class _Backlog:
    """One user's messages waiting for their call, and how many were dropped for room."""

    messages: deque[_Message] = field(default_factory=deque)
    dropped: int = 0


def _wanted(config: RuntimeConfig) -> bool:
    return config.memory.enabled and config.memory.extraction != "rules"


class LlmFactExtractor:
    """Runs LLM extraction in the background, one batch per user at a time.

    `llm` answers the calls, `config` returns the runtime config as it is now (read at every
    step, so an edit applies to the next batch), `target` holds the user's items (the
    `MemoryService`). Messages of one user arriving within `extraction_batch_seconds` go into
    one call. Bounded: at most `max_pending_per_user` messages per user and
    `max_users_pending` users wait (the oldest are dropped, with a log line), and at most
    `max_concurrent_calls` calls run at once.
    """

    def __init__(
        self,
        llm: LlmPort,
        config: Callable[[], RuntimeConfig],
        target: ExtractionTarget,
        *,
        max_pending_per_user: int = 32,
        max_users_pending: int = 1000,
        max_concurrent_calls: int = 2,
    ) -> None:
        self._llm = llm
        self._config = config
        self._target = target
        self._max_pending_per_user = max_pending_per_user
        self._max_users_pending = max_users_pending
        self._waiting: OrderedDict[str, _Backlog] = OrderedDict()
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._storing: set[str] = set()
        self._calls = asyncio.Semaphore(max_concurrent_calls)
        self._flush = asyncio.Event()

    def submit(self, user_id: str, user_text: str, source: str) -> None:
        """Queue one message of the user for extraction and return at once (call it on the
        event loop). Ignored while memory is disabled or `memory.extraction` is `rules`."""
        if not _wanted(self._config()) or not user_text.strip():
            return
        backlog = self._waiting.get(user_id)
        if backlog is None:
            self._make_room()
            backlog = self._waiting[user_id] = _Backlog()
        backlog.messages.append(_Message(user_text[:MAX_MESSAGE_CHARS], source))
        if len(backlog.messages) > self._max_pending_per_user:
            backlog.messages.popleft()
            backlog.dropped += 1
        if user_id not in self._workers:
            self._start(user_id)

    async def discard(self, user_id: str) -> None:
        """Forget this user's waiting messages and any answer on its way (`/forget all`,
        `/remember off`). Changes already being stored are let finish, so what the caller
        does next comes after them."""
        self._waiting.pop(user_id, None)
        worker = self._workers.get(user_id)
        if worker is None:
            return
        if user_id not in self._storing:
            worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)

    async def drain(self) -> None:
        """Send every waiting batch now, without its window, and wait for all of them."""
        self._flush.set()
        try:
            while self._workers:
                await asyncio.gather(*list(self._workers.values()), return_exceptions=True)
        finally:
            self._flush.clear()

    # -- internals --------------------------------------------------------------------------

    def _make_room(self) -> None:
        if len(self._waiting) < self._max_users_pending:
            return
        _, oldest = self._waiting.popitem(last=False)
        count = len(oldest.messages) + oldest.dropped
        log.warning("[Memory] LLM extraction is behind; dropped %d messages of one user", count)

    def _start(self, user_id: str) -> None:
        self._workers[user_id] = asyncio.create_task(
            self._work(user_id), name=f"memory-extract:{user_id}"
        )

    async def _work(self, user_id: str) -> None:
        try:
            while user_id in self._waiting:
                await self._window()
                async with self._calls:
                    batch = self._take(user_id)
                    if batch:
                        await self._extract(user_id, batch)
        finally:
            del self._workers[user_id]
            if user_id in self._waiting:  # submitted while this worker was being cancelled
                self._start(user_id)

    async def _window(self) -> None:
        """Let the user's quick follow-ups join the batch (`drain` cuts it short)."""
        seconds = self._config().memory.extraction_batch_seconds
        if seconds > 0 and not self._flush.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush.wait(), seconds)

    def _take(self, user_id: str) -> list[_Message]:
        backlog = self._waiting.get(user_id)
        if backlog is None:
            return []
        limit = self._config().memory.extraction_max_messages
        batch = [backlog.messages.popleft() for _ in range(min(limit, len(backlog.messages)))]
        if backlog.dropped:
            log.warning(
                "[Memory] LLM extraction is behind; dropped the %d oldest messages of one user",
                backlog.dropped,
            )
            backlog.dropped = 0
        if not backlog.messages:
            del self._waiting[user_id]
        return batch

    async def _extract(self, user_id: str, batch: list[_Message]) -> None:
        """Ask, then store. Any failure is one warning line, without the user's words."""
        config = self._config()
        if not _wanted(config):
            return  # turned off while the messages waited: nothing leaves the bot
        timeout = config.memory.extraction_timeout_seconds
        try:
            async with asyncio.timeout(timeout):
                shown, operations = await self._ask(config, user_id, [m.text for m in batch])
        except Exception as exc:
            log.warning(
                "[Memory] LLM extraction failed (%s); nothing stored from %d messages",
                _why(exc, timeout),
                len(batch),
            )
            return
        if _wanted(self._config()):
            said = [m.text for m in batch]
            await self._store(user_id, plan(operations, shown, batch[-1].source, said))

    async def _ask(
        self, config: RuntimeConfig, user_id: str, messages: list[str]
    ) -> tuple[dict[str, MemoryItem], list[Operation]]:
        nearest = await self._target.nearest(user_id, "\n".join(messages), NEAREST_ITEMS)
        shown = {str(number): item for number, item in enumerate(nearest, start=1)}
        request = extraction_request(config, shown, messages, billed_to=user_id)
        response = await self._llm.complete(request)
        return shown, parse_operations(response.text or "")

    async def _store(self, user_id: str, changes: Plan) -> None:
        self._storing.add(user_id)
        try:
            updated = deleted = 0
            for item_id, item_type, text in changes.updates:
                updated += await self._target.replace(user_id, item_id, item_type, text) is not None
            for item_id in changes.deletions:
                deleted += await self._target.forget(user_id, item_id) is not None
            if changes.additions:
                await self._target.add(user_id, changes.additions)
        except Exception as exc:
            log.warning("[Memory] storing LLM-extracted facts failed: %s", type(exc).__name__)
            return
        finally:
            self._storing.discard(user_id)
        level = logging.INFO if updated or deleted or changes.additions else logging.DEBUG
        log.log(
            level,
            "[Memory] LLM extraction: %d added, %d updated, %d deleted, %d ignored "
            "(%d not in the user's words)",
            len(changes.additions),
            updated,
            deleted,
            changes.ignored,
            changes.ungrounded,
        )


def _why(exc: Exception, timeout: float) -> str:
    """A reason fit for the log: never the answer's text, which may quote the user."""
    if isinstance(exc, LlmError):
        return exc.user_message
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g}s"
    if isinstance(exc, ValidationError):
        kind = exc.errors(include_url=False)[0]["type"]
        return (
            "the answer was not JSON" if kind == "json_invalid" else "the answer broke the schema"
        )
    return type(exc).__name__
