"""Crash-safe, private file writes: a reader sees the old file or the new one, never half of
one; and only the bot's own user can read what it writes.

Files are made 0600 and folders 0700 here, whatever the umask (the process also sets 077 at
start, as a second line). A file that is a symbolic link is never written through: an append
refuses it (`UnsafePath`, with a log line), an atomic write replaces the link itself. Nor is
a folder on the way: the data dir is resolved to its real path at start (`Settings`), so a
folder whose real path differs from its path passes through a link placed inside the data
dir (`data/sessions -> /elsewhere`), and every write there is refused the same way.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


class UnsafePath(OSError):
    """A path the bot will not write to (a symbolic link)."""


def make_private_dir(directory: Path) -> None:
    """Create `directory`, and each missing parent, readable by this user only (0700).
    Folders that exist already are left as they are. Raises `UnsafePath` when the path
    passes through a symbolic link."""
    _refuse_linked(directory)
    missing: list[Path] = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:
            continue  # made meanwhile by another thread; mkdir says so if it is a file


def _refuse_linked(directory: Path) -> None:
    """`UnsafePath` unless `directory` (what exists of it) is its own real path."""
    absolute = os.path.abspath(directory)
    if os.path.realpath(absolute) != absolute:
        log.error(
            "[Storage] refused to write in %s: a folder on its way is a symbolic link", directory
        )
        raise UnsafePath(f"refused to write in {directory}: a folder on its way is a symbolic link")


def open_private(path: Path, flags: int) -> int:
    """`os.open` for writing `path`: created 0600, never through a symbolic link, and made
    0600 if an older version left it readable by others."""
    make_private_dir(path.parent)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        log.error("[Storage] refused to write %s: it is a symbolic link", path)
        raise UnsafePath(f"refused to write {path}: it is a symbolic link") from None
    if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
        os.fchmod(fd, PRIVATE_FILE)
    return fd


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temp file beside `path`, fsync it, and rename it over `path`.

    The folder is fsynced too when `path` is new, so the file survives a power cut. Replacing
    an existing file skips that second fsync: after a power cut the folder then shows the new
    version or the previous one, both whole. The temp file is 0600 (mkstemp), and the rename
    replaces a symbolic link at `path` rather than writing where it points.
    """
    make_private_dir(path.parent)
    existed = path.exists()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if not existed:
        fsync_dir(path.parent)


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to `fd`. The one place file contents are written, so a test can
    make the disk full here (`OSError` ENOSPC) for every store at once."""
    written = os.write(fd, data)
    while written < len(data):  # regular files take it all at once; this is only a guard
        written += os.write(fd, data[written:])


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in `directory` survive a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AppendedFile:
    """A file that whole lines are appended to, as `append_line_safely` does, kept open.

    A store that appends several lines per message (the Telegram inbox, the usage ledger)
    would otherwise pay for opening the file each time: the folder check, the symbolic-link
    check, reading its last byte. Here an append costs one `fstat`, one write(2) and, when
    `durable`, one fsync. The `fstat` keeps `append_line_safely`'s promises: a file deleted or
    replaced meanwhile (compaction, an operator) is opened afresh, so no line goes where
    nobody reads; and when something else wrote to it since (another thread's batch, a write
    cut short by a full disk), its last byte is read again, so a line always starts on a
    fresh line. A failed write closes the file; the next append opens it again.
    For one thread at a time.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = 0  # the size this object last saw or left
        self._ends_line = True  # the file ends with a newline (or is empty)
        self._folder_synced = True  # the folder entry of a file this object made is on disk

    def append(self, data: bytes, *, durable: bool = True) -> None:
        fd = self._checked()
        if not self._ends_line:
            data = b"\n" + data
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except BaseException:
            self.close()
            raise
        self._size += len(data)
        self._ends_line = data.endswith(b"\n")
        if durable and not self._folder_synced:
            fsync_dir(self.path.parent)
            self._folder_synced = True

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # dropped unclosed (a test's store): no fd leak
            self.close()

    def _checked(self) -> int:
        """The file, open; opened afresh when it was deleted or replaced since."""
        if self._fd is not None:
            st = os.fstat(self._fd)
            if st.st_nlink > 0:
                if st.st_size != self._size:
                    self._note_end(self._fd, st.st_size)
                return self._fd
            self.close()
        new = not self.path.exists()
        fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
        try:
            self._note_end(fd, os.fstat(fd).st_size)
        except BaseException:
            os.close(fd)
            raise
        self._fd, self._folder_synced = fd, not new
        return fd

    def _note_end(self, fd: int, size: int) -> None:
        self._size = size
        self._ends_line = not size or os.pread(fd, 1, size - 1) == b"\n"


def append_line_safely(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Append whole lines in one write(2), then fsync (when `durable`).

    One system call means a `kill -9` cannot leave half of it. A power cut before the fsync can
    cut the last line short; the next append then starts on a fresh line, so the damage stays
    in that one line, which readers skip.
    """
    file = AppendedFile(path)
    try:
        file.append(data, durable=durable)
    finally:
        file.close()
