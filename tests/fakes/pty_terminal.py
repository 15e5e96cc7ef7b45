"""A process on a pseudo-terminal, as a person's terminal runs it: what it writes is read
back with `expect`, what the person types goes in with `type`."""

from __future__ import annotations

import codecs
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path


class PtyProcess:
    """`argv` with stdin, stdout and stderr on one terminal of `columns` x `rows`: a line a
    process writes to stderr shows in `output` as it would on the person's screen."""

    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path, columns: int = 80, rows: int = 24
    ) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)}
        self.process = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            close_fds=True,
            start_new_session=True,
            preexec_fn=_take_terminal,  # Ctrl+C typed here interrupts it, as in a terminal
        )
        os.close(slave)
        self._master = master
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.output = ""
        """Everything written to the terminal so far."""
        self._seen = 0

    def echoes(self) -> bool:
        """Whether the terminal shows what is typed (a program that dies mid-read can leave
        it without)."""
        return bool(termios.tcgetattr(self._master)[3] & termios.ECHO)

    def type(self, keys: str) -> None:
        """Keys as typed: `\\r` is Enter."""
        os.write(self._master, keys.encode())

    def expect(self, pattern: str | re.Pattern[str], timeout: float = 30) -> str:
        """Wait for `pattern` in what was written since the last match; returns that text up
        to the match's end. Fails after `timeout` seconds (a hang, not a speed check)."""
        regex = re.compile(re.escape(pattern)) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.output, self._seen)
            if match is not None:
                seen, self._seen = self.output[self._seen : match.end()], match.end()
                return seen
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                tail = self.output[self._seen :][-2000:]
                raise AssertionError(
                    f"{regex.pattern!r} never came; after the last match:\n{tail!r}"
                )

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._master, 65536)
        except OSError:  # the process ended and the terminal closed
            return False
        self.output += self._decoder.decode(data)
        return bool(data)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        os.close(self._master)

    def wait(self, timeout: float = 30) -> int:
        """Read to the end while waiting for the process to exit; its exit code."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05):
            pass
        return self.process.wait(max(deadline - time.monotonic(), 0.1))


def _take_terminal() -> None:
    """In the child, in its new session: the pseudo-terminal on stdin becomes its controlling
    terminal, so the terminal's Ctrl+C sends it SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
