"""The terminal chat: the embedded channel when no Telegram token is set."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TextIO

from bot.conversation import ChatAddress, IncomingMessage
from bot.i18n import FALLBACK, language_of_code, speaking
from bot.i18n.catalogue import telegram as texts
from bot.ports.channel import ReplyStream

TERMINAL_ADDRESS = ChatAddress(channel="terminal", chat_id="local")
TERMINAL_USER = "local"
QUIT_WORDS = ("/quit", "/exit")
PROMPT = "you> "


def locale_language(environ: Mapping[str, str] = os.environ) -> str | None:
    """The language of the terminal's locale, by POSIX precedence: `LC_ALL`, `LC_MESSAGES`,
    `LANG` (`ru_RU.UTF-8`); None when none is set."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environ.get(name):
            return environ[name]
    return None


class TerminalChannel:
    """Reads lines from stdin, prints replies to stdout. One user, one chat.

    Input is read on a daemon thread, so Ctrl+C or the end of input never waits on a blocked
    read.
    """

    name = "terminal"

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        language_code: str | None = None,
    ) -> None:
        """`language_code`: the locale the bot's own texts follow until `/language` says
        otherwise (`locale_language()`); English when None or not spoken."""
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._language_code = language_code

    async def send(self, address: ChatAddress, text: str) -> None:
        body = text.replace("\n", "\n     ")
        self._stdout.write(f"bot> {body}\n")
        self._stdout.flush()

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        return None

    async def run(self, handle: Callable[[IncomingMessage], Awaitable[None]]) -> None:
        """Chat until end of input or `/quit`."""
        with speaking(language_of_code(self._language_code) or FALLBACK):
            self._stdout.write(texts.terminal_banner() + "\n")
        self._stdout.flush()
        lines = self._start_reader()
        while True:
            self._stdout.write(PROMPT)
            self._stdout.flush()
            line = await lines.get()
            if line is None:
                self._stdout.write("\n")
                return
            text = line.strip()
            if text in QUIT_WORDS:
                return
            if text:
                # Whoever types here runs the bot on their own machine: the operator.
                message = IncomingMessage(
                    TERMINAL_ADDRESS,
                    TERMINAL_USER,
                    text,
                    operator=True,
                    language_code=self._language_code,
                )
                await handle(message)

    def _start_reader(self) -> asyncio.Queue[str | None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:
            for line in self._stdin:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=read, name="terminal-input", daemon=True).start()
        return queue
