"""The inbox: Telegram updates kept on disk from the moment they are fetched until handled.

Telegram forgets an update once the bot asks for the next ones (getUpdates with a higher
offset), which happens long before the update's turn is over. So each fetched batch is
appended to `<data dir>/telegram/inbox.jsonl` and fsynced first; when an update has been
handled, a `done` line follows. After a crash or a cancelled shutdown, what has no `done`
line is handled again at the next start, in the order Telegram sent it. A turn that did
finish before the crash is recognised by its message id and not answered twice.

Lines are ASCII JSON: a message may carry half an emoji (a lone UTF-16 surrogate), which has
no UTF-8 form but does have a JSON escape.

Only updates worth keeping are written (the caller decides: messages of allowed users), so a
stranger's words never reach the disk. Handled updates are dropped when the file is
compacted, at start and every few hundred updates.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bot.storage.atomic import append_line_safely, write_atomic

log = logging.getLogger(__name__)

COMPACT_AFTER_DONE = 500


class UpdateInbox:
    """Raw update JSON by update id, pending until marked done; one file, append-only."""

    def __init__(self, path: Path, keep: Callable[[dict[str, Any]], bool]) -> None:
        self.path = path
        self._keep = keep
        self._pending: dict[int, dict[str, Any]] = {}
        self._done_since_compaction = 0
        self.last_update_id = 0
        """The highest update id ever fetched: polling resumes after it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._load()
        self._compact()

    def pending(self) -> list[dict[str, Any]]:
        """Updates fetched but not handled, oldest first."""
        return [self._pending[update_id] for update_id in sorted(self._pending)]

    def received(self, updates: Iterable[dict[str, Any]]) -> None:
        """Keep a fetched batch durably. Call before Telegram is told it was received."""
        lines: list[str] = []
        for update in updates:
            update_id = int(update["update_id"])
            if update_id <= self.last_update_id and update_id not in self._pending:
                continue  # fetched and handled before: Telegram sent it again
            self.last_update_id = max(self.last_update_id, update_id)
            if self._keep(update):
                self._pending[update_id] = update
                lines.append(json.dumps({"update": update}))
            else:
                lines.append(json.dumps({"seen": update_id}))
        if lines:
            self._append("\n".join(lines) + "\n", durable=True)

    def done(self, update_id: int) -> None:
        """The update was handled; it will not be replayed. (Not fsynced: a lost `done`
        line only means a replay, which the session recognises.)"""
        if self._pending.pop(update_id, None) is None:
            return
        self._append(json.dumps({"done": update_id}) + "\n", durable=False)
        self._done_since_compaction += 1
        if self._done_since_compaction >= COMPACT_AFTER_DONE:
            self._compact()

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
                elif "done" in entry:
                    update_id = int(entry["done"])
                    self._pending.pop(update_id, None)
                else:
                    update_id = int(entry["seen"])
            except (ValueError, KeyError, TypeError):
                log.warning("[Telegram] inbox line %d is damaged; skipped", number)
                continue
            self.last_update_id = max(self.last_update_id, update_id)
        if self._pending:
            count = len(self._pending)
            log.info("[Telegram] %d message(s) from before the last stop to handle", count)

    def _compact(self) -> None:
        """Rewrite the file with only what is pending, plus where polling resumes."""
        lines = [json.dumps({"seen": self.last_update_id})] if self.last_update_id else []
        lines += [json.dumps({"update": u}) for u in self.pending()]
        write_atomic(self.path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
        self._done_since_compaction = 0

    def _append(self, text: str, *, durable: bool) -> None:
        append_line_safely(self.path, text.encode("utf-8"), durable=durable)
