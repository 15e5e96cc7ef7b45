"""One user's memory on disk: JSONL files under `<data dir>/memory/u-<user id>/`.

    episodic/2025-03-01.jsonl   exchanges, one file per day of creation
    semantic.jsonl              facts, preferences, constraints
    procedural.jsonl            how-tos, fixes, commands
    document.jsonl              parts of documents the user shared

Every change is an append of whole lines in one write(2), then fsynced: a new item, or a new
version of an item (same id; the last line wins). A `kill -9` cannot cut a line; a power cut
can cut the last one short, and such a line is skipped with a warning and never glued to the
next one. Removing lines (forget,
expiry, promotion, old versions) rewrites the file through a temp file and a rename, so a
file is always either the old or the new version, whole. All methods block: call them from a
worker thread.
"""

from __future__ import annotations

import logging
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from pydantic import ValidationError

from bot.memory.model import Layer, MemoryItem
from bot.memory.retention import without_stored_ttl
from bot.storage.atomic import append_line_safely, write_atomic

log = logging.getLogger(__name__)


@dataclass
class _FileContent:
    items: list[MemoryItem] = field(default_factory=list)
    """Every readable line, in order."""
    lines: int = 0
    damaged: list[str] = field(default_factory=list)
    cleared: bool = False
    """A stored TTL was cleared (the config keeps episodes without one): rewrite the file."""


def _latest(
    parsed: dict[Path, _FileContent], paths: list[Path], now: datetime
) -> dict[str, tuple[MemoryItem, Path]]:
    """The live version of each id, with its file: a later line of an id wins, also across
    files (in the order of `paths`), and an expired last version drops the id."""
    latest: dict[str, tuple[MemoryItem, Path]] = {}
    for path in paths:
        for item in parsed[path].items:
            # A promotion cut short by a crash leaves the old episodic line behind, and the
            # semantic one is read later.
            latest[item.id] = (item, path)
    return {item_id: pair for item_id, pair in latest.items() if not pair[0].expired(now)}


class UserFiles:
    """The files of one user. The caller makes sure only one thread writes them at a time."""

    def __init__(self, root: Path, user_id: str) -> None:
        # A prefix keeps ids such as ".." from naming a folder outside `root`.
        self.directory = root / f"u-{quote(user_id, safe='-_')}"

    def path_for(self, item: MemoryItem) -> Path:
        if item.layer is Layer.EPISODIC:
            return self.episode_path(item.created_at)
        return self.directory / f"{item.layer.value}.jsonl"

    def episode_path(self, created_at: datetime) -> Path:
        return self.directory / "episodic" / f"{created_at:%Y-%m-%d}.jsonl"

    def all_files(self) -> list[Path]:
        """Episodic days oldest first, then semantic, procedural and document: later files win
        a tie."""
        days = sorted((self.directory / "episodic").glob("*.jsonl"))
        layered = [
            self.directory / f"{layer}.jsonl"
            for layer in (Layer.SEMANTIC, Layer.PROCEDURAL, Layer.DOCUMENT)
        ]
        return [*days, *(path for path in layered if path.exists())]

    def load(
        self,
        now: datetime,
        on_layered: Callable[[list[MemoryItem]], None] | None = None,
        stored_ttl: bool = True,
    ) -> list[MemoryItem]:
        """Every live item: the last version of each id, expired ones dropped.

        `stored_ttl` False (the config sets no episode TTL, `bot/memory/retention.py`): a TTL
        stored with an item is cleared rather than honoured, and its file rewritten without it.

        Files holding old versions, damaged lines or expired items are rewritten with only
        their live items (damaged lines are kept aside in `<file>.damaged`). The semantic and
        procedural files are read first: `on_layered` gets their live items (facts and how-tos,
        which no episodic line can override) before the episodes, often far more, are read.
        """
        files = self.all_files()
        layered = [path for path in files if path.parent == self.directory]
        parsed = {path: self._read(path, stored_ttl) for path in layered}
        if on_layered is not None:
            on_layered([item for item, _ in _latest(parsed, layered, now).values()])
        parsed.update((path, self._read(path, stored_ttl)) for path in files if path not in parsed)
        live = _latest(parsed, files, now)
        by_path: dict[Path, list[MemoryItem]] = {path: [] for path in files}
        for item, path in live.values():
            by_path[path].append(item)
        for path in files:
            content = parsed[path]
            if content.lines != len(by_path[path]) or content.cleared:
                self._compact(path, by_path[path], content.damaged)
        return [item for item, _ in live.values()]

    def _read(self, path: Path, stored_ttl: bool = True) -> _FileContent:
        content = _FileContent()
        try:
            raw = path.read_bytes()
        except OSError as exc:
            log.warning("[Memory] cannot read %s, skipping it: %s", path, exc)
            return content
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            content.lines += 1
            try:
                item = MemoryItem.model_validate_json(line)
            except ValidationError as exc:
                reason = exc.errors(include_url=False)[0]["msg"]
                log.warning("[Memory] %s line %d is damaged (%s); skipped", path, number, reason)
                content.damaged.append(line.decode("utf-8", "replace"))
                continue
            if not stored_ttl and item.ttl_days is not None:
                item, content.cleared = without_stored_ttl(item), True
            content.items.append(item)
        return content

    def _compact(self, path: Path, items: list[MemoryItem], damaged: list[str]) -> None:
        if damaged:
            aside = "\n".join(damaged) + "\n"  # 0600 like every file the bot writes
            append_line_safely(path.with_name(path.name + ".damaged"), aside.encode("utf-8"))
        self.rewrite(path, items)

    def append(self, items: list[MemoryItem]) -> None:
        """Append each item (a new one or a new version) to its file, durably."""
        by_path: dict[Path, list[MemoryItem]] = {}
        for item in items:
            by_path.setdefault(self.path_for(item), []).append(item)
        for path, group in by_path.items():
            lines = b"".join(item.model_dump_json().encode() + b"\n" for item in group)
            append_line_safely(path, lines)

    def rewrite(self, path: Path, items: list[MemoryItem]) -> None:
        """Replace `path` with exactly `items`; an emptied file is removed."""
        if not items:
            path.unlink(missing_ok=True)
            return
        data = b"".join(item.model_dump_json().encode() + b"\n" for item in items)
        write_atomic(path, data)

    def delete_all(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def remove_ids(path: Path, item_ids: set[str]) -> int:
    """Rewrite `path` without the lines of `item_ids` (any version); returns lines removed.

    Reads the file itself rather than trusting memory, so an old version left behind by a
    promotion cannot bring a forgotten item back at the next start.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0
    kept: list[bytes] = []
    for line in raw.splitlines():
        try:
            item_id = MemoryItem.model_validate_json(line).id
        except ValidationError:
            item_id = None  # a damaged line stays for the next load to set aside
        if item_id not in item_ids and line.strip():
            kept.append(line + b"\n")
    removed = len(raw.splitlines()) - len(kept)
    if removed:
        if kept:
            write_atomic(path, b"".join(kept))
        else:
            path.unlink(missing_ok=True)
    return removed


def append_items(files: UserFiles, stored: list[MemoryItem], promoted_ids: set[str]) -> None:
    """Append `stored` to their files; the promoted ones leave their day files."""
    files.append(stored)
    left_behind: dict[Path, set[str]] = defaultdict(set)
    for item in stored:
        if item.id in promoted_ids:
            left_behind[files.episode_path(item.created_at)].add(item.id)
    for day_file, item_ids in left_behind.items():
        remove_ids(day_file, item_ids)


def erase_items(files: UserFiles, gone: list[MemoryItem]) -> None:
    """Remove `gone` from their files and from the day files they were episodes in."""
    by_file: dict[Path, set[str]] = defaultdict(set)
    for item in gone:
        by_file[files.path_for(item)].add(item.id)
        by_file[files.episode_path(item.created_at)].add(item.id)
    for path, item_ids in by_file.items():
        remove_ids(path, item_ids)
