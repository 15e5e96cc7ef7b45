"""CPU-bound tool work in a child process, so that it can never stall the event loop.

A long computation inside C (a power of huge integers) holds the GIL from start to end, so a
worker thread would stall every chat just the same; a separate process leaves the bot's loop
free, and can be stopped from outside. The child is `python -I -S <script>`: the standard
library only, no environment, no site packages. It gets its input on stdin, and is killed
when its time is up or when the caller is cancelled (tool timeout, turn deadline, shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path


class IsolatedFailure(Exception):
    """The child ran out of time or died; the message says so in words for the model."""


class CpuLimitReached(IsolatedFailure):
    """The child used up the CPU time it gave itself (`RLIMIT_CPU`: the kernel's SIGXCPU)."""


class IsolatedScript:
    """Runs one standard-library script per call, at most `max_parallel` at once."""

    def __init__(
        self,
        script: Path,
        limit_seconds: float,
        max_parallel: int = 0,
        standard_library_only: bool = True,
    ) -> None:
        """`standard_library_only=False` lets the script import installed packages (`-I`
        without `-S`); it must then put its own code's folder on `sys.path` itself."""
        self.script = script
        self.limit_seconds = limit_seconds
        self._flags = ["-I", "-S"] if standard_library_only else ["-I"]
        self._max_parallel = max_parallel or os.cpu_count() or 2
        self._slots: asyncio.Semaphore | None = None  # made in the loop that uses it

    async def run(self, text: str) -> str:
        """The script's stdout for `text` on its stdin. Raises `IsolatedFailure`, or OSError
        when no child process can be started."""
        output = await self.run_bytes(text.encode("utf-8"))
        return output.decode("utf-8", "replace")

    async def run_bytes(
        self, data: bytes, args: list[str] | None = None, limit_seconds: float | None = None
    ) -> bytes:
        """The script's stdout for `data` on its stdin and `args` on its command line, within
        `limit_seconds` (default: the script's own limit)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_parallel)
        async with self._slots:
            return await self._run(data, args or [], limit_seconds or self.limit_seconds)

    async def _run(self, data: bytes, args: list[str], limit: float) -> bytes:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *self._flags,
            str(self.script),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            async with asyncio.timeout(limit):
                output, _ = await process.communicate(data)
        except TimeoutError:
            raise IsolatedFailure(f"took longer than {limit:g} seconds and was stopped") from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await asyncio.shield(process.wait())  # reaped even if cancelled again
        if process.returncode == -signal.SIGXCPU:
            raise CpuLimitReached("used up its CPU time and was stopped")
        if process.returncode != 0:
            raise IsolatedFailure("was stopped before it finished (out of time or memory)")
        return output
