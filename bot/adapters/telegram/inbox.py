"""The inbox: Telegram updates kept on disk from the moment they are received until handled.

Telegram forgets an update once the bot confirms it (getUpdates with a higher offset, or a
200 answer to a webhook post), which happens long before the update's turn is over. So each
received batch is appended to `<data dir>/telegram/inbox.jsonl` and fsynced first; when an
update has been handled, a `done` line follows. After a crash or a cancelled shutdown, what
has no `done` line is handled again at the next start, in the order Telegram sent it. A turn
that did finish before the crash is recognised by its message id and not answered twice.

Each start of an update's turn is counted with a `start` line, written before the turn runs
(not fsynced: a `kill -9` keeps what was written, and the turn is what might kill the bot). So
a message whose turn crashed or was cut short twice is recognised at its third start, and is
answered with an apology instead of freezing or killing the bot once more.

While a reply streams, the ids of the preview messages shown so far are kept with the update
(a `preview` line, cleared once the answer is final): a replay after a kill deletes that
half-written preview before answering again.

The moment the final reply is delivered, its text is kept with the update too (an `answered`
line, not fsynced either), ahead of the session write and the `done` line: a kill in that
instant is then recorded at the replay (the turn saved with the reply the user already has),
not answered a second time. What is left is the time between Telegram accepting the reply
and this line being written: the bot cannot know of a delivery sooner.

Lines are ASCII JSON: a message may carry half an emoji (a lone UTF-16 surrogate), which has
no UTF-8 form but does have a JSON escape.

Only updates worth keeping are written (the caller decides: messages of allowed users), so a
stranger's words never reach the disk, only its id (a `seen` line, so polling resumes after
it). The file is compacted at start and every `COMPACT_AFTER_LINES` lines, so neither
handled updates nor strangers' ids pile up in it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bot.config import RuntimeConfigStore
from bot.ports.inbox import Deliver
from bot.storage.atomic import AppendedFile, append_line_safely, make_private_dir, write_atomic

log = logging.getLogger(__name__)

COMPACT_AFTER_LINES = 1_000
RECENTLY_DONE = 2_000
"""Handled update ids remembered in memory, to recognise Telegram sending one again."""


def from_allowed_users(config: RuntimeConfigStore) -> Callable[[dict[str, Any]], bool]:
    """Which fetched updates the inbox keeps: messages of allowed users, nobody else's (in
    their chats with the bot, or where they summoned it as a guest)."""

    def keep(update: dict[str, Any]) -> bool:
        message = update.get("message") or update.get("guest_message") or {}
        sender = message.get("from") or {}
        return sender.get("id") in config.current().telegram.allowed_users

    return keep


class UpdateInbox:
    """Raw update JSON by update id, pending until marked done; one file, append-only.

    Also a `UserMemoryStore`: handled updates stay in the file until it is compacted, so
    `/forget all` compacts it at once, and counts the user's handled messages that went.
    """

    label = "received Telegram messages kept on disk"

    def __init__(self, path: Path, keep: Callable[[dict[str, Any]], bool]) -> None:
        self.path = path
        self._keep = keep
        self._on_loop = AppendedFile(path)
        """The lines written on the event loop (start, preview, answered, done), several per
        message: kept open there. A `received` batch runs on a worker thread and opens the
        file for itself."""
        self._pending: dict[int, dict[str, Any]] = {}
        self._starts: dict[int, int] = {}  # pending update id -> turns started
        self._previews: dict[int, list[int]] = {}  # pending update id -> unfinished preview
        self._answers: dict[int, str] = {}  # pending update id -> the reply it was given
        self._recently_done: dict[int, None] = {}  # insertion-ordered, trimmed to RECENTLY_DONE
        self._lines_since_compaction = 0
        self._refused = False  # the disk refuses the inbox: logged once, until a write works
        self._deliver: Deliver | None = None
        self.last_update_id = 0
        """The highest update id ever fetched: polling resumes after it."""
        self._load()
        try:
            make_private_dir(path.parent)
            self._compact()
        except OSError as exc:  # what is on disk stays valid; appends are retried per batch
            log.error("[Telegram] could not compact the inbox at start: %s; starting anyway", exc)

    def depth(self) -> int:
        """Updates fetched but not handled yet."""
        return len(self._pending)

    def pending(self) -> list[dict[str, Any]]:
        """Updates fetched but not handled, oldest first."""
        return [self._pending[update_id] for update_id in sorted(self._pending)]

    def received(self, updates: Iterable[dict[str, Any]]) -> list[int]:
        """Keep a fetched batch durably. Call before Telegram is told it was received.

        Returns the ids of the updates that are new: not one this inbox holds or has lately
        seen handled (Telegram sends an update again when it missed the confirmation). Ids are
        not assumed to grow: webhook posts may arrive out of order. A repeat of an update
        handled before a restart is let through; its session recognises the message.
        """
        lines: list[str] = []
        fresh: list[int] = []
        for update in updates:
            update_id = int(update["update_id"])
            if update_id in self._pending or update_id in self._recently_done:
                continue  # Telegram sent it again
            fresh.append(update_id)
            self.last_update_id = max(self.last_update_id, update_id)
            if self._keep(update):
                self._pending[update_id] = update
                lines.append(json.dumps({"update": update}))
            else:
                lines.append(json.dumps({"seen": update_id}))
        if lines:
            try:
                self._append("\n".join(lines) + "\n", durable=True, count=len(lines))
            except OSError as exc:  # a full disk: answered all the same, only not replayable
                self._refuse(exc)
                return fresh
            self._compact_when_long()
        return fresh

    def started(self, update_id: int) -> int:
        """Count a start of the update's turn, on disk before the turn runs; returns how many
        starts it has had, this one included (0 for an update the inbox does not hold)."""
        if update_id not in self._pending:
            return 0
        self._starts[update_id] = self._starts.get(update_id, 0) + 1
        try:
            self._append(json.dumps({"start": update_id}) + "\n", durable=False)
        except OSError as exc:  # the message is still answered; only a replay would not know
            self._refuse(exc)
        return self._starts[update_id]

    def preview_shown(self, update_id: int, message_ids: list[int]) -> None:
        """The messages of the update's reply shown so far, still a preview; [] once the
        reply is final. (Not fsynced, like `started`: a `kill -9` keeps what was written.)"""
        if update_id not in self._pending or self._previews.get(update_id, []) == message_ids:
            return
        if message_ids:
            self._previews[update_id] = list(message_ids)
        else:
            self._previews.pop(update_id, None)
        try:
            line = json.dumps({"preview": update_id, "ids": message_ids}) + "\n"
            self._append(line, durable=False)
        except OSError as exc:
            log.error("[Telegram] could not note the preview of update %d: %s", update_id, exc)

    def answered(self, update_id: int, reply: str) -> None:
        """The update's final reply went out: keep its text until the update is done."""
        if update_id not in self._pending:
            return
        self._answers[update_id] = reply
        try:
            line = json.dumps({"answered": update_id, "reply": reply}) + "\n"
            self._append(line, durable=False)
        except OSError as exc:  # at worst the old window: a replay answers it again
            self._refuse(exc)

    def answer_of(self, update_id: int) -> str | None:
        """The reply a cut-short turn of this update had already delivered, if any."""
        return self._answers.get(update_id)

    def leftover_preview(self, update_id: int) -> list[int]:
        """Preview messages a cut-short turn of this update left behind."""
        return list(self._previews.get(update_id, []))

    def done(self, update_id: int) -> None:
        """The update was handled; it will not be replayed. (Not fsynced: a lost `done`
        line only means a replay, which the session recognises.)"""
        if self._pending.pop(update_id, None) is None:
            return
        self._forget_turn_of(update_id)
        self._handled(update_id)
        try:
            self._append(json.dumps({"done": update_id}) + "\n", durable=False)
        except OSError as exc:  # at worst a replay, which the session recognises
            self._refuse(exc)
            return
        self._compact_when_long()

    # -- the channel's side (`TelegramInbox`): one process, so every new update is its own --
    async def open(self, deliver: Deliver) -> None:
        """Hand out what the file holds from before a stop, then each new update."""
        self._deliver = deliver
        pending = self.pending()
        for data in pending:
            await deliver(data)
        if pending:
            log.info("[Telegram] handling %d message(s) kept from before a stop", len(pending))

    async def close(self) -> None:
        self._deliver = None
        self._on_loop.close()

    async def take(self, updates: list[dict[str, Any]]) -> None:
        """`received` off the event loop (one fsync), then the new updates to `deliver`. A
        full disk costs only the replay (`received` logs it); on any other failure all of
        them are handled anyway (and the log says so) rather than the bot going silent."""
        try:
            fresh = set(await asyncio.to_thread(self.received, updates))
        except Exception as exc:
            log.error("[Telegram] could not keep %d update(s) in the inbox: %s", len(updates), exc)
            fresh = {int(update["update_id"]) for update in updates}
        for update in updates:
            if int(update["update_id"]) in fresh and self._deliver is not None:
                await self._deliver(update)

    async def count_start(self, update_id: int) -> int:
        return self.started(update_id)

    async def finished(self, update_id: int) -> None:
        self.done(update_id)

    def _refuse(self, exc: OSError) -> None:
        if not self._refused:
            log.error(
                "[Telegram] could not write the inbox (%s): messages are answered, but not "
                "kept for a replay after a crash, until the disk has room",
                exc.strerror or exc,
            )
        self._refused = True

    def _compact_when_long(self) -> None:
        if self._lines_since_compaction < COMPACT_AFTER_LINES:
            return
        try:
            self._compact()
        except OSError as exc:  # the appended lines are valid; compaction is tried again later
            log.error("[Telegram] could not compact the inbox: %s", exc)

    async def count_for(self, user_id: str) -> int:
        return len(await asyncio.to_thread(self._handled_of, user_id))

    async def forget_user(self, user_id: str) -> int:
        """Rewrite the file without handled updates; an update still pending (this very
        command among them) is kept until its turn is over."""
        handled = await asyncio.to_thread(self._handled_of, user_id)
        self._compact()
        return len(handled)

    def _handled_of(self, user_id: str) -> list[int]:
        """Ids of the user's updates in the file that are already handled."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        found: dict[int, None] = {}
        for line in lines:
            try:
                update = json.loads(line).get("update")
                if update and sender_of(update) == user_id:
                    found[int(update["update_id"])] = None
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return [update_id for update_id in found if update_id not in self._pending]

    def _load(self) -> None:
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if "update" in entry:
                    update_id = int(entry["update"]["update_id"])
                    self._pending[update_id] = entry["update"]
                    if entry.get("starts"):
                        self._starts[update_id] = int(entry["starts"])
                    if entry.get("preview"):
                        self._previews[update_id] = [int(i) for i in entry["preview"]]
                    if isinstance(entry.get("answer"), str):
                        self._answers[update_id] = entry["answer"]
                elif "preview" in entry:
                    update_id = int(entry["preview"])
                    if update_id in self._pending:
                        ids = [int(i) for i in entry.get("ids") or []]
                        if ids:
                            self._previews[update_id] = ids
                        else:
                            self._previews.pop(update_id, None)
                elif "answered" in entry:
                    update_id = int(entry["answered"])
                    if update_id in self._pending and isinstance(entry.get("reply"), str):
                        self._answers[update_id] = entry["reply"]
                elif "start" in entry:
                    update_id = int(entry["start"])
                    if update_id in self._pending:
                        self._starts[update_id] = self._starts.get(update_id, 0) + 1
                elif "done" in entry:
                    update_id = int(entry["done"])
                    self._pending.pop(update_id, None)
                    self._forget_turn_of(update_id)
                    self._handled(update_id)
                else:
                    update_id = int(entry["seen"])
            except (ValueError, KeyError, TypeError):
                log.warning("[Telegram] inbox line %d is damaged; skipped", number)
                continue
            self.last_update_id = max(self.last_update_id, update_id)
        if self._pending:
            count = len(self._pending)
            log.info("[Telegram] %d message(s) from before the last stop to handle", count)

    def _forget_turn_of(self, update_id: int) -> None:
        self._starts.pop(update_id, None)
        self._previews.pop(update_id, None)
        self._answers.pop(update_id, None)

    def _handled(self, update_id: int) -> None:
        self._recently_done[update_id] = None
        if len(self._recently_done) > RECENTLY_DONE:
            del self._recently_done[next(iter(self._recently_done))]

    def _compact(self) -> None:
        """Rewrite the file with only what is pending (how often each was started, what
        preview it left, what reply it was given), plus where polling resumes."""
        lines = [json.dumps({"seen": self.last_update_id})] if self.last_update_id else []
        for update in self.pending():
            update_id = int(update["update_id"])
            entry: dict[str, Any] = {"update": update}
            if self._starts.get(update_id):
                entry["starts"] = self._starts[update_id]
            if self._previews.get(update_id):
                entry["preview"] = self._previews[update_id]
            if update_id in self._answers:
                entry["answer"] = self._answers[update_id]
            lines.append(json.dumps(entry))
        write_atomic(self.path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
        self._lines_since_compaction = 0

    def _append(self, text: str, *, durable: bool, count: int = 1) -> None:
        """Durable appends are `received`'s batches, on a worker thread; the others are made
        on the event loop, through the file kept open for it."""
        if durable:
            append_line_safely(self.path, text.encode("utf-8"))
        else:
            self._on_loop.append(text.encode("utf-8"), durable=False)
        self._lines_since_compaction += count
        if self._refused:
            self._refused = False
            log.info("[Telegram] writing the inbox works again")


def sender_of(update: dict[str, Any]) -> str | None:
    """The id of whoever sent the update's message, edit or post."""
    for value in update.values():
        if isinstance(value, dict) and isinstance(value.get("from"), dict):
            return str(value["from"].get("id"))
    return None


def chat_of(update: dict[str, Any]) -> str:
    """The chat an update belongs to, from its raw JSON ("" for one without a chat): the
    unit a shared inbox keeps in order and hands to one process at a time."""
    for value in update.values():
        if isinstance(value, dict) and isinstance(value.get("chat"), dict):
            return str(value["chat"].get("id"))
    return ""
