"""The skills in `preferences/skills/`, re-read when a `SKILL.md` is added, edited or removed.

`refresh` costs one directory listing and one `stat` per skill folder, and reads only the
`SKILL.md` files whose size or modification time changed, on a worker thread; the app calls it
once per turn (and for `/skill` and `/status`), so an edit applies from the next message
without a restart and without a watcher thread. A skill that breaks the format is left out
with one log line (once per version of the file) and listed by `/status`; the others keep
working. A `SKILL.md` is read only when it is a regular file (a FIFO would wait forever for a
writer) inside its skill's folder: a link to a file outside it is refused (the folder itself
may be a link the operator made).
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from bot.conversation.scope import MemoryScope
from bot.i18n.catalogue import commands as texts
from bot.skills.parsing import SKILL_FILE, InvalidSkill, Skill, parse_skill
from bot.skills.resources import NotRegularFile, read_regular_file

log = logging.getLogger(__name__)

MAX_SKILL_FILE_BYTES = 64 * 1024
"""About 16,000 tokens: well over the specification's advice of 5,000 for a body."""
MAX_SKILLS = 100
"""Folders beyond this many (by name) are not loaded: the catalogue goes into every prompt."""

_Signature = tuple[int, int, int]
"""(inode, size, mtime in ns) of a `SKILL.md`: a change to any means read it again."""


@dataclass(frozen=True)
class SkillProblem:
    """A folder that holds no valid skill, and why: for the log and `/status`."""

    folder: str
    reason: str


class SkillLibrary:
    """Every valid skill by name, and the problems of the invalid ones, kept current by
    `refresh`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._loaded: dict[str, tuple[_Signature, Skill | SkillProblem]] = {}
        self._skills: dict[str, Skill] = {}
        self._problems: list[SkillProblem] = []

    async def refresh(self) -> None:
        """Take in what changed on disk since the last call."""
        folders = self._folders()
        seen: dict[str, tuple[_Signature, Skill | SkillProblem]] = {}
        for folder in folders[:MAX_SKILLS]:
            seen[folder.name] = await self._load(folder)
        for name in self._loaded.keys() - seen.keys():
            log.info("[Skills] %s is gone from %s", name, self.directory)
        self._loaded = seen
        self._skills = {s.name: s for _, s in seen.values() if isinstance(s, Skill)}
        self._problems = [p for _, p in seen.values() if isinstance(p, SkillProblem)]
        if len(folders) > MAX_SKILLS:
            extra = ", ".join(f.name for f in folders[MAX_SKILLS:][:5])
            self._problems.append(
                SkillProblem(extra, f"not loaded: only the first {MAX_SKILLS} skills are")
            )

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name.strip().lower())

    def available(self) -> list[Skill]:
        """The valid skills, by name."""
        return [self._skills[name] for name in sorted(self._skills)]

    def problems(self) -> list[SkillProblem]:
        return list(self._problems)

    async def status_lines(self, scope: MemoryScope) -> list[str]:
        """`/status`: how many skills there are, and each one left out with its reason."""
        await self.refresh()
        if not self._skills and not self._problems:
            return []
        names = ", ".join(sorted(self._skills)) or texts.none_listed()
        lines = [texts.skills_status(len(self._skills), names)]
        lines += [texts.skill_left_out(p.folder, p.reason) for p in self._problems[:10]]
        return lines

    def _folders(self) -> list[Path]:
        try:
            entries = sorted(os.scandir(self.directory), key=lambda e: e.name)
        except OSError:
            return []
        return [
            Path(e.path)
            for e in entries
            if not e.name.startswith(".") and _is_dir(e)  # a linked skill folder counts
        ]

    async def _load(self, folder: Path) -> tuple[_Signature, Skill | SkillProblem]:
        """The folder's skill as last read, or read again when its `SKILL.md` changed."""
        path = folder / SKILL_FILE
        try:
            st = path.stat()
        except OSError:
            signature: _Signature = (0, -1, 0)
        else:
            signature = (st.st_ino, st.st_size, st.st_mtime_ns)
        known = self._loaded.get(folder.name)
        if known is not None and known[0] == signature:
            return known
        size = signature[1]
        loaded: Skill | SkillProblem
        if size < 0:
            loaded = SkillProblem(folder.name, f"no {SKILL_FILE} in the folder")
        elif size > MAX_SKILL_FILE_BYTES:
            loaded = SkillProblem(
                folder.name,
                f"{SKILL_FILE} is {size:,} bytes, over the {MAX_SKILL_FILE_BYTES:,} limit",
            )
        else:
            loaded = await asyncio.to_thread(_read, folder, path)
        if isinstance(loaded, SkillProblem):
            log.warning("[Skills] skipped %s: %s", folder, loaded.reason)
        else:
            log.info("[Skills] loaded %s from %s", loaded.name, folder)
        return signature, loaded


def _read(folder: Path, path: Path) -> Skill | SkillProblem:
    """The skill in `path`, read only if it is a regular file inside `folder`."""
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(folder.resolve(strict=True)):
            return SkillProblem(folder.name, f"{SKILL_FILE} is a link leading out of the folder")
        data = read_regular_file(real, MAX_SKILL_FILE_BYTES + 1)
        if len(data) > MAX_SKILL_FILE_BYTES:
            return SkillProblem(folder.name, f"{SKILL_FILE} grew past the size limit")
        return parse_skill(folder, data.decode("utf-8"))
    except NotRegularFile:
        return SkillProblem(folder.name, f"{SKILL_FILE} is not a regular file")
    except UnicodeDecodeError:
        return SkillProblem(folder.name, f"{SKILL_FILE} is not UTF-8 text")
    except OSError as exc:
        return SkillProblem(folder.name, f"cannot read {SKILL_FILE} ({exc.strerror})")
    except InvalidSkill as exc:
        return SkillProblem(folder.name, str(exc))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
