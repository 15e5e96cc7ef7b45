"""Which documents each user has on the LightRAG server, so they can be counted and deleted."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from pydantic import ValidationError

from bot.rag.documents import tag
from bot.rag.model import LedgerEntry
from bot.storage.atomic import append_line_safely, make_private_dir, write_atomic
from bot.storage.disk import START, DiskHealth

log = logging.getLogger("bot.rag")


class IndexLedger:
    """One JSONL file per user under `<data dir>/rag/ledger/`, appended with fsync.

    A document is recorded when the server takes it, and again once its id is known: the
    later line of a `file_source` wins. The names recorded of each user asked about by
    `holds` are kept in memory from then on, so the index worker reads a file once.
    """

    def __init__(self, directory: Path, disk: DiskHealth | None = None) -> None:
        self.directory = directory
        try:
            make_private_dir(directory)
        except OSError as exc:
            (disk or DiskHealth()).failed(START, exc, "starting anyway")
        self._owner_tags = {path.stem for path in directory.glob("*.jsonl")}
        self._sources: dict[str, set[str]] = {}  # owner -> file sources, once asked

    def path_for(self, owner: str) -> Path:
        return self.directory / f"{tag(owner)}.jsonl"

    async def record(self, owner: str, entry: LedgerEntry) -> None:
        line = (entry.model_dump_json() + "\n").encode("utf-8")
        await asyncio.to_thread(append_line_safely, self.path_for(owner), line)
        self._owner_tags.add(tag(owner))
        if owner in self._sources:
            self._sources[owner].add(entry.file_source)

    def entries(self, owner: str) -> list[LedgerEntry]:
        """The user's documents, each as last recorded, in the order first recorded."""
        try:
            lines = self.path_for(owner).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        entries: dict[str, LedgerEntry] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = LedgerEntry.model_validate(json.loads(line))
            except (ValueError, ValidationError):
                log.warning("[RAG] skipped damaged line %d of %s", number, self.path_for(owner))
                continue
            entries[entry.file_source] = entry
        return list(entries.values())

    async def entries_of(self, owner: str) -> list[LedgerEntry]:
        """`entries`, as `IndexLedgerStore` reads them."""
        return self.entries(owner)

    async def holds(self, owner: str, file_source: str) -> bool:
        return file_source in await self._known(owner)

    async def held(self, owner: str, file_sources: set[str]) -> set[str]:
        return file_sources & await self._known(owner)

    async def _known(self, owner: str) -> set[str]:
        """The owner's recorded file sources, read from their file once."""
        if owner not in self._sources:
            entries = await asyncio.to_thread(self.entries, owner)
            self._sources[owner] = {entry.file_source for entry in entries}
        return self._sources[owner]

    async def forget(self, owner: str) -> None:
        """`clear`, as `IndexLedgerStore` does it."""
        self.clear(owner)

    async def drop(self, owner: str, file_sources: set[str]) -> None:
        """Rewrite the owner's file without these documents (deleted on the server)."""
        kept = [e for e in self.entries(owner) if e.file_source not in file_sources]
        if not kept:
            self.clear(owner)
            return
        data = "".join(entry.model_dump_json() + "\n" for entry in kept).encode("utf-8")
        await asyncio.to_thread(write_atomic, self.path_for(owner), data)
        if owner in self._sources:
            self._sources[owner] -= file_sources

    def owner_count(self) -> int:
        """How many users have documents recorded here, i.e. share the server; no disk read."""
        return len(self._owner_tags)

    def clear(self, owner: str) -> None:
        self.path_for(owner).unlink(missing_ok=True)
        self._owner_tags.discard(tag(owner))
        self._sources.pop(owner, None)
