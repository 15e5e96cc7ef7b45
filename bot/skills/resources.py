"""A skill's own files (`references/`, `assets/`, ...), read for the model on request.

Only files inside the skill's folder: a path that climbs out (`..`), is absolute, or passes
through a symbolic link leading outside is refused, and so is anything but a regular UTF-8
text file with one name: a hard link may be another name of any file on the same disk (the
bot's `.env`), and nothing in the folder tells where it leads. A file is read up to
`MAX_RESOURCE_BYTES`; the rest is cut, and the model is told.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path, PurePosixPath

from bot.skills.parsing import Skill

MAX_RESOURCE_BYTES = 32 * 1024
MAX_LISTED_FILES = 50
_MAX_LIST_DEPTH = 4


class ResourceRefused(ValueError):
    """A resource path the model may not read; the message says why (no server path in it)."""


class NotRegularFile(OSError):
    """A folder, a device, a FIFO or a socket: nothing to read as a file."""


class HardLinked(OSError):
    """A regular file with more than one name."""


def read_regular_file(path: Path, limit: int, single_name: bool = False) -> bytes:
    """Up to `limit` bytes of `path`, opened without following a final link and without
    waiting on a FIFO. Raises `NotRegularFile`, `HardLinked` (with `single_name`), or the
    OSError of the open."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise NotRegularFile(path.name)
        if single_name and found.st_nlink > 1:
            raise HardLinked(path.name)
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        return file.read(limit)


def read_resource(skill: Skill, relative: str) -> str:
    """The text of `relative` in the skill's folder, cut at `MAX_RESOURCE_BYTES`."""
    path = _inside(skill, relative)
    try:
        data = read_regular_file(path, MAX_RESOURCE_BYTES + 1, single_name=True)
    except FileNotFoundError:
        raise ResourceRefused(f"{relative!r} is not a file of skill {skill.name}") from None
    except NotRegularFile:
        raise ResourceRefused(f"{relative!r} is not a regular file") from None
    except HardLinked:
        raise ResourceRefused(f"{relative!r} is a hard link; only plain files are read") from None
    except OSError as exc:
        raise ResourceRefused(f"cannot open {relative!r} ({exc.strerror})") from None
    cut = len(data) > MAX_RESOURCE_BYTES
    try:  # incremental: a character cut in two at the limit is left out, not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(data[:MAX_RESOURCE_BYTES], not cut)
    except UnicodeDecodeError:
        raise ResourceRefused(f"{relative!r} is not a text file") from None
    if "\x00" in text:
        raise ResourceRefused(f"{relative!r} is not a text file")
    if cut:
        text += f"\n… [cut at {MAX_RESOURCE_BYTES:,} bytes]"
    return text


def list_resources(skill: Skill) -> list[str]:
    """The skill's files besides `SKILL.md`, relative to its folder, by name; at most
    `MAX_LISTED_FILES`, hidden files and links (symbolic or hard) left out."""
    found: list[str] = []
    root = skill.folder
    for folder, dirs, files in os.walk(root, followlinks=False):
        depth = len(Path(folder).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < _MAX_LIST_DEPTH)
        for name in sorted(files):
            path = Path(folder) / name
            if name.startswith(".") or _is_link(path) or (depth == 0 and name == "SKILL.md"):
                continue
            found.append(path.relative_to(root).as_posix())
            if len(found) >= MAX_LISTED_FILES:
                return found
    return found


def _is_link(path: Path) -> bool:
    try:
        found = path.lstat()
    except OSError:
        return True
    return stat.S_ISLNK(found.st_mode) or found.st_nlink > 1


def _inside(skill: Skill, relative: str) -> Path:
    """The absolute path of `relative`, once it is sure to stay in the skill's folder."""
    cleaned = relative.strip()
    if not cleaned:
        raise ResourceRefused("give the path of a file in the skill's folder")
    if "\x00" in cleaned or "\\" in cleaned:
        raise ResourceRefused(f"{relative!r} is not a valid path")
    pure = PurePosixPath(cleaned)
    if pure.is_absolute() or ".." in pure.parts:
        raise ResourceRefused(
            f"{relative!r} is outside the skill's folder: give a path relative to it, without '..'"
        )
    root = skill.folder.resolve()
    target = (root / pure).resolve()
    if not target.is_relative_to(root):
        raise ResourceRefused(f"{relative!r} leads outside the skill's folder")
    return target
