"""Crash-safe file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temp file beside `path`, fsync it, and rename it over `path`.

    The folder is fsynced too when `path` is new, so the file survives a power cut. Replacing
    an existing file skips that second fsync: after a power cut the folder then shows the new
    version or the previous one, both whole.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if not existed:
        fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in `directory` survive a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_line_safely(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Append whole lines in one write(2), then fsync (when `durable`).

    One system call means a `kill -9` cannot leave half of it. A power cut before the fsync can
    cut the last line short; the next append then starts on a fresh line, so the damage stays
    in that one line, which readers skip.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        written = os.write(fd, data)
        while written < len(data):  # regular files take it all at once; this is only a guard
            written += os.write(fd, data[written:])
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    if new and durable:
        fsync_dir(path.parent)
