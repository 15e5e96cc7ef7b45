"""The durable index queue: a document is on disk before anything is sent, so none is lost.

One JSON file per document under `<data dir>/rag/queue/`, named so that listing order is
arrival order, written atomically. A document leaves the queue only once the server has it;
one the server refuses for good moves to `failed/` with the reason, for an operator to see.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from bot.rag.model import QueuedDocument, RagDocument
from bot.storage.atomic import make_private_dir, write_atomic
from bot.storage.disk import START, DiskHealth

log = logging.getLogger("bot.rag")


def _read(path: Path) -> RagDocument:
    """A set-aside document's file (it was readable when set aside: `failed_of` read it)."""
    return RagDocument.model_validate_json(path.read_bytes())


class IndexQueue:
    """FIFO of documents waiting for LightRAG, safe across crashes and restarts.

    A document the disk refuses waits in memory (up to `max_unwritten`, oldest dropped first)
    and is written on the next `put` or `DiskHealth` retry; `on_written` then wakes the worker.

    Who owns each queued document is kept in memory (read once at start), so `/status` and
    `/memory` count a user's queued documents without reading the queue.
    """

    unwritten_label = "document(s) for the index queue"
    poll_seconds: float | None = None
    """Only this process adds documents: the worker waits to be woken, never polls."""

    def __init__(
        self, directory: Path, disk: DiskHealth | None = None, max_unwritten: int = 1_000
    ) -> None:
        self.directory = directory
        self.failed_dir = directory.parent / "failed"
        self.on_written: Callable[[], None] | None = None
        self._disk = disk or DiskHealth()
        self._disk.add_backlog(self)
        self._unwritten: OrderedDict[str, bytes] = OrderedDict()  # file name -> document
        self._max_unwritten = max_unwritten
        self._retrying = asyncio.Lock()
        self._owner_of: dict[str, str] = {}  # file name -> owner, of every queued document
        self._per_owner: Counter[str] = Counter()
        try:
            make_private_dir(directory)
        except OSError as exc:
            self._disk.failed(START, exc, "starting anyway")
        names = self._names()
        self._depth = len(names)
        for name in names:
            self._track(name, _owner_in(directory / name))

    def count_for(self, owner: str) -> int:
        """How many documents of `owner` wait (on disk or in memory); reads no file."""
        return self._per_owner[owner]

    @property
    def depth(self) -> int:
        return self._depth

    async def put(self, document: RagDocument) -> None:
        """Write `document` durably; returns once it would survive a crash, or once it is
        kept in memory for a retry when the disk refuses it."""
        name = f"{time.time_ns():020d}-{secrets.token_hex(3)}.json"
        data = document.model_dump_json().encode("utf-8")
        # Counted before the write: the worker may send and remove the file before it returns.
        self._depth += 1
        self._track(name, document.owner)
        try:
            await asyncio.to_thread(write_atomic, self.directory / name, data)
        except OSError as exc:
            self._keep_unwritten(name, data, exc)
            return
        except BaseException:
            self._depth -= 1
            self._untrack(name)
            raise
        self._disk.wrote("index queue")
        if self._unwritten:
            await self.retry_unwritten()

    def unwritten(self) -> int:
        return len(self._unwritten)

    async def retry_unwritten(self) -> None:
        """Write what waits in memory, oldest first (names keep arrival order on disk)."""
        async with self._retrying:
            written = 0
            for name, data in list(self._unwritten.items()):
                try:
                    await asyncio.to_thread(write_atomic, self.directory / name, data)
                except OSError as exc:
                    self._disk.failed("index queue", exc)
                    break
                self._unwritten.pop(name, None)
                written += 1
            if written:
                self._disk.wrote("index queue")
                if self.on_written is not None:
                    self.on_written()

    def forget_unwritten(self, owner: str) -> int:
        """Drop the documents of `owner` that wait in memory (`/forget all`)."""
        names = [
            name
            for name, data in self._unwritten.items()
            if RagDocument.model_validate_json(data).owner == owner
        ]
        for name in names:
            del self._unwritten[name]
            self._untrack(name)
        self._depth = max(0, self._depth - len(names))
        return len(names)

    def _keep_unwritten(self, name: str, data: bytes, exc: OSError) -> None:
        self._disk.failed("index queue", exc)
        self._unwritten[name] = data
        if len(self._unwritten) > self._max_unwritten:
            self._untrack(self._unwritten.popitem(last=False)[0])
            self._depth = max(0, self._depth - 1)
            log.error("[RagIndexing] over %d unwritten; dropped the oldest", self._max_unwritten)

    # -- `IndexQueueStore`, as the index worker and `/forget all` use it ------------------------

    async def claim(self) -> QueuedDocument | None:
        """The oldest document (one process sends: nothing to lock)."""
        return self.oldest()

    async def done(self, item: QueuedDocument) -> None:
        self.remove(item)

    async def release(self, item: QueuedDocument) -> None:
        """Not sent this time: it stays first in line (nothing to do for files)."""

    async def refuse(self, item: QueuedDocument, reason: str) -> None:
        self.set_aside(item, reason)

    async def count_of(self, owner: str) -> int:
        """The owner's documents waiting, and those set aside (they hold their words too)."""
        refused = await asyncio.to_thread(self.failed_of, owner)  # rarely any
        return self.count_for(owner) + len(refused)

    async def forget_user(self, owner: str) -> int:
        """Drop the owner's documents: queued on disk, set aside, and waiting in memory for
        room on the disk; returns how many went."""
        queued = [item for item in self.all() if item.document.owner == owner]
        for item in queued:
            self.remove(item)
        refused = self.failed_of(owner)
        for path in refused:
            self.delete_failed(path)
        return len(queued) + len(refused) + self.forget_unwritten(owner)

    async def forget_where(self, owner: str, wanted: Callable[[RagDocument], bool]) -> int:
        """Drop the owner's documents `wanted` accepts, queued, set aside or waiting in
        memory; returns how many went."""
        queued = [i for i in self.all() if i.document.owner == owner and wanted(i.document)]
        for item in queued:
            self.remove(item)
        refused = [path for path in self.failed_of(owner) if wanted(_read(path))]
        for path in refused:
            self.delete_failed(path)
        waiting = [
            name
            for name, data in self._unwritten.items()
            if (document := RagDocument.model_validate_json(data)).owner == owner
            and wanted(document)
        ]
        for name in waiting:
            del self._unwritten[name]
            self._untrack(name)
        self._depth = max(0, self._depth - len(waiting))
        return len(queued) + len(refused) + len(waiting)

    # -- the files themselves -------------------------------------------------------------------

    def oldest(self) -> QueuedDocument | None:
        """The document that has waited longest; unreadable files go to `failed/`."""
        for name in self._names():
            path = self.directory / name
            try:
                return QueuedDocument(path, RagDocument.model_validate_json(path.read_bytes()))
            except FileNotFoundError:
                continue
            except (ValidationError, OSError, ValueError) as exc:
                self._set_aside(path, f"unreadable: {exc}")
        return None

    def all(self) -> list[QueuedDocument]:
        items = []
        for name in self._names():
            try:
                path = self.directory / name
                items.append(
                    QueuedDocument(path, RagDocument.model_validate_json(path.read_bytes()))
                )
            except (ValidationError, OSError, ValueError):
                continue
        return items

    def remove(self, item: QueuedDocument) -> None:
        try:
            item.path.unlink()
            self._depth = max(0, self._depth - 1)
            self._untrack(item.path.name)
        except FileNotFoundError:
            pass

    def set_aside(self, item: QueuedDocument, reason: str) -> None:
        """Move a document the server refused for good to `failed/`, with the reason."""
        self._set_aside(item.path, reason)

    def failed_count(self) -> int:
        if not self.failed_dir.is_dir():
            return 0
        return sum(1 for name in os.listdir(self.failed_dir) if name.endswith(".json"))

    def failed_of(self, owner: str) -> list[Path]:
        """The set-aside documents of `owner` (they hold the exchange's words too)."""
        if not self.failed_dir.is_dir():
            return []
        found = []
        for path in sorted(self.failed_dir.glob("*.json")):
            try:
                if RagDocument.model_validate_json(path.read_bytes()).owner == owner:
                    found.append(path)
            except (ValidationError, OSError, ValueError):
                continue
        return found

    def delete_failed(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        path.with_name(f"{path.name}.reason.txt").unlink(missing_ok=True)

    def _set_aside(self, path: Path, reason: str) -> None:
        make_private_dir(self.failed_dir)
        try:
            os.replace(path, self.failed_dir / path.name)
        except FileNotFoundError:
            return
        self._untrack(path.name)
        write_atomic(self.failed_dir / f"{path.name}.reason.txt", (reason + "\n").encode("utf-8"))
        self._depth = max(0, self._depth - 1)
        log.error("[RagIndexing] Set aside %s: %s", path.name, reason)

    def _track(self, name: str, owner: str | None) -> None:
        if owner is not None:
            self._owner_of[name] = owner
            self._per_owner[owner] += 1

    def _untrack(self, name: str) -> None:
        owner = self._owner_of.pop(name, None)
        if owner is not None:
            self._per_owner[owner] -= 1
            if not self._per_owner[owner]:
                del self._per_owner[owner]

    def _names(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.directory) if n.endswith(".json"))
        except FileNotFoundError:  # the disk refused to make the folder
            return []


def _owner_in(path: Path) -> str | None:
    """The owner of a queued document file; None when it cannot be read (set aside later)."""
    try:
        owner = json.loads(path.read_bytes()).get("owner")
    except (OSError, ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None
