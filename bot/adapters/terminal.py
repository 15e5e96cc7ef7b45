"""The terminal chat: the embedded channel when no Telegram token is set."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TextIO

from bot.conversation import ChatAddress, IncomingMessage
from bot.ports.channel import ReplyStream

TERMINAL_ADDRESS = ChatAddress(channel="terminal", chat_id="local")
TERMINAL_USER = "local"
QUIT_WORDS = ("/quit", "/exit")
PROMPT = "you> "
BANNER = "Chat with the bot here. /help lists the commands, /new starts afresh, /quit leaves."


class TerminalChannel:
    """Reads lines from stdin, prints replies to stdout. One user, one chat.

    Input is read on a daemon thread, so Ctrl+C or the end of input never waits on a blocked
    read.
    """

    name = "terminal"

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout

    async def send(self, address: ChatAddress, text: str) -> None:
        body = text.replace("\n", "\n     ")
        self._stdout.write(f"bot> {body}\n")
        self._stdout.flush()

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        return None

    async def run(self, handle: Callable[[IncomingMessage], Awaitable[None]]) -> None:
        """Chat until end of input or `/quit`."""
        self._stdout.write(BANNER + "\n")
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
                message = IncomingMessage(TERMINAL_ADDRESS, TERMINAL_USER, text, operator=True)
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
