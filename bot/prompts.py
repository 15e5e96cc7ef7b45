"""Editable prompt files (`preferences/prompts/*.md`), re-read when they change."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

FIRST_FILES = ("IDENTITY.md", "RULES.md")
FALLBACK_PROMPT = "You are a helpful assistant."


class PromptFiles:
    """The prompt sections in order: IDENTITY.md, RULES.md, then any other `*.md` by name."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._text = FALLBACK_PROMPT

    def text(self) -> str:
        """The joined prompt files; one directory scan when nothing changed."""
        files = self._scan()
        signature = tuple(files)
        if signature != self._signature:
            self._signature = signature
            parts = [_read(self.directory / name) for name, _, _ in files]
            self._text = "\n\n".join(p for p in parts if p) or FALLBACK_PROMPT
        return self._text

    def _scan(self) -> list[tuple[str, int, int]]:
        """(name, mtime, size) of each `*.md`, IDENTITY.md and RULES.md first."""
        try:
            entries = [e for e in os.scandir(self.directory) if e.name.endswith(".md")]
        except OSError:
            return []
        found = {}
        for entry in entries:
            try:
                st = entry.stat()
            except OSError:
                continue
            found[entry.name] = (entry.name, st.st_mtime_ns, st.st_size)
        first = [found.pop(name) for name in FIRST_FILES if name in found]
        return first + [found[name] for name in sorted(found)]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("[Prompts] cannot read %s: %s", path, exc)
        return ""
