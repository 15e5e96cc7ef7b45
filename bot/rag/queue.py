"""The durable index queue: a document is on disk before anything is sent, so none is lost.

One JSON file per document under `<data dir>/rag/queue/`, named so that listing order is
arrival order, written atomically. A document leaves the queue only once the server has it;
one the server refuses for good moves to `failed/` with the reason, for an operator to see.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from bot.rag.documents import RagDocument
from bot.storage.atomic import make_private_dir, write_atomic

log = logging.getLogger("bot.rag")


@dataclass(frozen=True)
class QueuedDocument:
    path: Path
    document: RagDocument


class IndexQueue:
    """FIFO of documents waiting for LightRAG, safe across crashes and restarts."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.failed_dir = directory.parent / "failed"
        make_private_dir(directory)
        self._depth = len(self._names())

    @property
    def depth(self) -> int:
        return self._depth

    async def put(self, document: RagDocument) -> None:
        """Write `document` durably; returns once it would survive a crash."""
        name = f"{time.time_ns():020d}-{secrets.token_hex(3)}.json"
        data = document.model_dump_json().encode("utf-8")
        # Counted before the write: the worker may send and remove the file before it returns.
        self._depth += 1
        try:
            await asyncio.to_thread(write_atomic, self.directory / name, data)
        except BaseException:
            self._depth -= 1
            raise

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
        write_atomic(self.failed_dir / f"{path.name}.reason.txt", (reason + "\n").encode("utf-8"))
        self._depth = max(0, self._depth - 1)
        log.error("[RagIndexing] Set aside %s: %s", path.name, reason)

    def _names(self) -> list[str]:
        return sorted(n for n in os.listdir(self.directory) if n.endswith(".json"))
