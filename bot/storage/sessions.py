"""Sessions as JSON files under `<data dir>/sessions/`, one per chat, written atomically."""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from datetime import datetime
from pathlib import Path
from urllib.parse import quote, unquote

from pydantic import ValidationError

from bot.chat_locks import ChatLocks
from bot.conversation import Session, utc_now
from bot.storage.atomic import make_private_dir, write_atomic
from bot.storage.disk import START, DiskHealth
from bot.storage.unsaved import UnsavedSessions

log = logging.getLogger(__name__)


class JsonSessionStore:
    """`SessionStore` on files, with a small in-memory cache of recently used sessions.

    The cache is safe because every turn of a chat runs under that chat's lock and this process
    is the only writer. A session is serialised on the event loop (so no other coroutine can
    change it half-way) and written and fsynced on a worker thread (so the loop never waits on
    the disk). A damaged file is moved aside (`*.corrupt-<time>.json`), never deleted.

    A session the disk refuses stays in memory (up to `max_unsaved` of them), is what the
    chat's next turn loads, and is written again on the next save of any session and by the
    `DiskHealth` retries.
    """

    label = "messages in conversations (current and archived)"
    """As `/forget all` lists it (`UserMemoryStore`)."""
    unwritten_label = "unsaved session(s)"
    """As `/status` lists what the disk refused (`Backlog`)."""

    def __init__(
        self,
        directory: Path,
        cache_size: int = 512,
        disk: DiskHealth | None = None,
        max_unsaved: int = 1_000,
    ) -> None:
        self.directory = directory
        self.archive_dir = directory / "archive"
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._cache_size = cache_size
        self._unsaved = UnsavedSessions(max_unsaved)
        self._writing = ChatLocks()  # one write of a session at a time, in save order
        self._disk = disk or DiskHealth()
        self._disk.add_backlog(self)
        try:
            make_private_dir(directory)
        except OSError as exc:
            self._disk.failed(START, exc, "starting anyway")

    def path_for(self, key: str) -> Path:
        return self.directory / f"{quote(key, safe='-_.')}.json"

    async def load(self, key: str) -> Session:
        """From the cache, else read on the event loop: parsing holds the GIL in a thread too,
        and a thread hop per turn costs more than reading a page-cached file."""
        unsaved = self._unsaved.get(key)
        if unsaved is not None:  # the disk refused it: the file is older than this
            self._remember(unsaved.session)
            return unsaved.session
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        session = self._read(key)
        self._remember(session)
        return session

    async def save(self, session: Session) -> None:
        """Write `session`; if the disk refuses, keep it in memory for a retry (no error)."""
        session.updated_at = utc_now()
        self._remember(session)
        self._unsaved.keep(session)
        if await self._write(session.key):
            await self.retry_unwritten()
        self._unsaved.bound()

    def unwritten(self) -> int:
        return len(self._unsaved)

    async def retry_unwritten(self) -> None:
        """Write the sessions the disk refused. A chat whose write is under way is left to
        it: waiting for it would hold this turn up behind other chats' disk writes."""
        for key in self._unsaved.keys():
            if not self._writing.busy(key) and not await self._write(key):
                return

    async def _write(self, key: str) -> bool:
        """Write the unsaved session of `key`, if still unsaved; False when the disk refused."""
        async with self._writing.hold(key):
            entry = self._unsaved.get(key)
            if entry is None:
                return True  # a save or retry that queued behind this one wrote it
            data = entry.session.to_json()
            try:
                await asyncio.to_thread(write_atomic, self.path_for(key), data)
            except OSError as exc:
                self._disk.failed("sessions", exc)
                return False
            self._unsaved.written(entry)
            self._disk.wrote("sessions")
            return True

    async def archive(self, key: str) -> None:
        self._cache.pop(key, None)
        self._unsaved.discard(key)
        await asyncio.to_thread(self._archive_file, self.path_for(key))

    def _archive_file(self, path: Path) -> None:
        if path.exists():
            make_private_dir(self.archive_dir)
            os.replace(path, self.archive_dir / f"{path.stem}.{_stamp(utc_now())}.json")

    async def count_for(self, user_id: str) -> int:
        """The user's messages in every session, archived ones too (read on a worker thread)."""
        cached = {key: session.count_of(user_id) for key, session in self._cache.items()}
        on_disk = await asyncio.to_thread(self._count_on_disk, user_id, set(cached))
        return sum(cached.values()) + on_disk

    async def forget_user(self, user_id: str) -> int:
        """Drop the user's turns from every session, current and archived; an archived one
        left empty is deleted, and so is a damaged copy of their private chat. Returns how
        many of their messages went.

        Current sessions are read and changed on the event loop and cached before they are
        written, so a turn of another chat that loads one meanwhile sees it without them.
        """
        dropped = 0
        for key in self._current_keys():
            cached = self._cache.get(key)
            session = cached if cached is not None else self._read(key)
            count = session.forget_user(user_id)
            if count:
                dropped += count
                await self.save(session)
        dropped += await asyncio.to_thread(self._forget_in_archive, user_id)
        return dropped

    def _current_keys(self) -> list[str]:
        on_disk = [
            unquote(path.stem)
            for path in self.directory.glob("*.json")
            if ".corrupt-" not in path.name
        ]
        return list(dict.fromkeys([*self._cache, *on_disk]))

    def _count_on_disk(self, user_id: str, cached: set[str]) -> int:
        total = 0
        for path in self.directory.glob("*.json"):
            key = unquote(path.stem)
            if ".corrupt-" not in path.name and key not in cached:
                total += _parse(path, key).count_of(user_id)
        for path in self._archived():
            total += _parse(path, _archived_key(path)).count_of(user_id)
        return total

    def _forget_in_archive(self, user_id: str) -> int:
        dropped = 0
        for path in self._archived():
            session = _parse(path, _archived_key(path))
            count = session.forget_user(user_id)
            if not count:
                continue
            dropped += count
            if session.turn_count:
                write_atomic(path, session.to_json())
            else:
                path.unlink(missing_ok=True)
        for path in self.directory.glob("*.corrupt-*.json"):  # unreadable: the chat decides
            key = unquote(path.name.split(".corrupt-", 1)[0])
            if key.split(":")[1:2] == [user_id]:
                path.unlink(missing_ok=True)
        return dropped

    def _archived(self) -> list[Path]:
        return sorted(self.archive_dir.glob("*.json")) if self.archive_dir.is_dir() else []

    def _read(self, key: str) -> Session:
        path = self.path_for(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return Session(key=key)
        try:
            session = Session.model_validate_json(raw)
        except ValidationError as exc:
            aside = path.with_name(f"{path.stem}.corrupt-{_stamp(utc_now())}.json")
            os.replace(path, aside)
            log.warning(
                "[Sessions] %s is damaged (%s); moved it to %s and started a fresh session",
                path,
                exc.errors(include_url=False)[0]["msg"],
                aside.name,
            )
            return Session(key=key)
        if session.key != key:
            session.key = key
        return session

    def _remember(self, session: Session) -> None:
        self._cache[session.key] = session
        self._cache.move_to_end(session.key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)


def _parse(path: Path, key: str) -> Session:
    """A session file, or an empty session when it is gone or unreadable."""
    try:
        return Session.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return Session(key=key)


def _archived_key(path: Path) -> str:
    return unquote(path.stem.rsplit(".", 1)[0])


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%S%fZ")
