"""One bot process per data dir.

Two processes on one data dir would each keep their own view of sessions, memory and the
queues, and overwrite each other's files (the Telegram inbox, the index ledger). So the bot
holds an exclusive `flock` on `<data dir>/bot.lock` while it runs. The operating system lets
go of it when the process ends in any way, `kill -9` included: a stale lock file never
blocks the next start.

With `DATABASE_URL` the lock is shared (`shared=True`): several processes serving one bot
may run on one data dir, and a bot on files still finds it in use (and they it). What the
database holds (sessions, usage, the Telegram inbox) is not in the folder at all; what is
still written there per process is the log (`bot.log`, terminal only) and the e5 and media
helpers' temporary files, each under its own name. The stores not yet in PostgreSQL
(short-term memory, the index queue and ledger, reminders, the `/model`, `/language`,
`/voice` choices) are still files here: until they move, give each process its own data
dir (`docs/DEPLOYMENT.md`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from bot.storage import atomic
from bot.storage.atomic import UnsafePath, open_private

LOCK_NAME = "bot.lock"


class DataDirRefused(Exception):
    """The bot cannot use the data dir; the message says why and what to do."""


class DataDirInUse(DataDirRefused):
    """Another running bot holds the data dir; the message says which and what to do."""


class DataDirLock:
    def __init__(self, data_dir: Path, shared: bool = False) -> None:
        """`shared`: processes that keep their state in PostgreSQL, any number at once."""
        self.data_dir = data_dir
        self.path = data_dir / LOCK_NAME
        self.shared = shared
        self._fd: int | None = None
        self.write_error: OSError | None = None
        """Why the lock file could not be made or written (a full disk): the bot starts anyway."""

    def acquire(self) -> None:
        """Take the lock, or raise `DataDirInUse` at once (no waiting); `DataDirRefused` when
        the lock file is a symbolic link. Makes the data dir (0700) when it is missing.

        A disk that refuses the lock file or the pid in it is no reason to stay down (a
        supervisor would restart the bot in a loop): that is kept in `write_error`."""
        try:
            fd = open_private(self.path, os.O_RDWR)
        except UnsafePath:
            raise DataDirRefused(
                f"{self.path} is a symbolic link, and the bot writes through none in its data "
                "dir. Remove it (it is only a lock file) and start again."
            ) from None
        except OSError as exc:
            self.write_error = exc  # no file to lock; nothing else can be written either
            return
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            who = f"Another bot (pid {holder}) is" if holder else "Bots using DATABASE_URL are"
            raise DataDirInUse(
                f"{who} running with the data dir {self.data_dir}. Stop it first, or give "
                "this one its own data dir (--data-dir or BOT_DATA_DIR)."
            ) from None
        self._fd = fd
        if self.shared:  # no one pid to name; the file stays empty
            return
        os.ftruncate(fd, 0)
        try:
            atomic.write_all(fd, f"{os.getpid()}\n".encode())
        except OSError as exc:
            self.write_error = exc

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
