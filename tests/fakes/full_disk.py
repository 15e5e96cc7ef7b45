"""A disk that is full on demand: every file write and every new folder under `root` fails
with ENOSPC, as on a real full disk, until `full` is set back to False."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bot.storage import atomic


class FullDisk:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.full = True
        self.refused = 0
        real_write, real_mkdir = atomic.write_all, os.mkdir

        def write_all(fd: int, data: bytes) -> None:
            self._check()
            real_write(fd, data)

        def mkdir(path, mode=0o777, *args, **kwargs):
            if Path(path).resolve().is_relative_to(root.resolve()):
                self._check()
            return real_mkdir(path, mode, *args, **kwargs)

        monkeypatch.setattr(atomic, "write_all", write_all)
        monkeypatch.setattr(os, "mkdir", mkdir)

    def _check(self) -> None:
        if self.full:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device")
