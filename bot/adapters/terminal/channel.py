"""The terminal chat: the embedded channel when no Telegram token is set."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TextIO

from bot.adapters.terminal.screen import PROMPT, Screen, is_terminal, wants_plain
from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.conversation import ChatAddress, IncomingMessage
from bot.i18n import FALLBACK, language_of_code, speaking
from bot.i18n.catalogue import telegram as texts
from bot.ports.channel import ReplyStream

UNREADABLE = "\x00unreadable"
"""What the reader hands over for a line that is not text in the terminal's encoding."""
TERMINAL_ADDRESS = ChatAddress(channel="terminal", chat_id="local")
TERMINAL_USER = "local"
QUIT_WORDS = ("/quit", "/exit")


def locale_language(environ: Mapping[str, str] = os.environ) -> str | None:
    """The language of the terminal's locale, by POSIX precedence: `LC_ALL`, `LC_MESSAGES`,
    `LANG` (`ru_RU.UTF-8`); None when none is set."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environ.get(name):
            return environ[name]
    return None


class TerminalChannel:
    """Reads lines from stdin, shows replies on stdout (`Screen`). One user, one chat.

    Input is read on a daemon thread, so Ctrl+C or the end of input never waits on a blocked
    read; on a terminal through readline (line editing, history), one line per prompt.
    """

    name = "terminal"

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        language_code: str | None = None,
        screen: Screen | None = None,
    ) -> None:
        """`language_code`: the locale the bot's own texts follow until `/language` says
        otherwise (`locale_language()`); English when None or not spoken. `screen`: how
        replies are shown (default: Markdown on a colour terminal, else plain text)."""
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._language_code = language_code
        self._readline = self._stdin is sys.stdin and is_terminal(self._stdin)
        self._screen = screen or screen_for(self._stdout, self._typed)

    def register_commands(self, registry: CommandRegistry) -> None:
        """`/quit` in `/help`; no `/stop`, which nobody could type while an answer is written
        (the next line is read once the answer is complete)."""
        registry.remove("stop")
        registry.register(Command("quit", texts.about_quit.say(), self._quit_alone))

    async def send(self, address: ChatAddress, text: str) -> None:
        self._screen.message(text)

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        return _TerminalStream(self._screen)

    async def run(self, handle: Callable[[IncomingMessage], Awaitable[None]]) -> None:
        """Chat until end of input or `/quit`."""
        self._screen.message(self._speaking(texts.terminal_banner))
        with self._terminal_restored():
            lines, ready = self._start_reader()
            while True:
                if not self._readline:
                    self._screen.prompt()
                ready.set()
                line = await lines.get()
                if line is None:
                    self._stdout.write("\n")
                    return
                text = line.strip()
                if text in QUIT_WORDS:
                    return
                if line == UNREADABLE:
                    self._screen.message(self._speaking(texts.terminal_unreadable_line))
                elif text:
                    await self._handle(handle, text)

    async def _handle(
        self, handle: Callable[[IncomingMessage], Awaitable[None]], text: str
    ) -> None:
        # Whoever types here runs the bot on their own machine: the operator.
        message = IncomingMessage(
            TERMINAL_ADDRESS,
            TERMINAL_USER,
            text,
            operator=True,
            language_code=self._language_code,
        )
        self._screen.waiting()
        try:
            await handle(message)
        finally:
            self._screen.settle()

    def _start_reader(self) -> tuple[asyncio.Queue[str | None], threading.Event]:
        """A thread that reads one line each time `ready` is set, after the last reply."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        ready = threading.Event()
        if self._readline:
            import readline  # noqa: F401  (input() edits lines and keeps history through it)

        def read() -> None:
            while True:
                ready.wait()
                ready.clear()
                line = self._read_line()
                loop.call_soon_threadsafe(lines.put_nowait, line)
                if line is None:
                    return

        threading.Thread(target=read, name="terminal-input", daemon=True).start()
        return lines, ready

    def _read_line(self) -> str | None:
        self._screen.at_prompt = True
        try:
            if self._readline:
                return input(PROMPT)
            return self._read_piped_line()
        except EOFError:
            return None
        except UnicodeDecodeError:  # bytes that are no text: said so, and the chat goes on
            return UNREADABLE
        finally:
            self._screen.at_prompt = False

    def _read_piped_line(self) -> str | None:
        """One line, decoded on its own: a line that is not text costs only itself (the text
        layer decodes ahead, so one bad byte would take the lines after it)."""
        buffer = getattr(self._stdin, "buffer", None)
        if buffer is None:  # already text (a test's StringIO)
            return self._stdin.readline() or None
        raw: bytes = buffer.readline()
        return raw.decode(self._stdin.encoding or "utf-8") if raw else None

    def _speaking(self, text: Callable[[], str]) -> str:
        """One of the terminal's own texts, in the locale's language."""
        with speaking(language_of_code(self._language_code) or FALLBACK):
            return text()

    def _typed(self) -> str:
        """What has been typed at the prompt so far, to draw it again under a reminder."""
        if not self._readline:
            return ""
        import readline

        return readline.get_line_buffer()

    @contextlib.contextmanager
    def _terminal_restored(self) -> Iterator[None]:
        """Readline changes the terminal's modes while it reads: leaving in the middle of a
        read (Ctrl+C at the prompt) would leave the terminal without echo."""
        if not self._readline:
            yield
            return
        import termios

        fd = self._stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            if self._screen.at_prompt:  # the shell's prompt starts on a line of its own
                self._stdout.write("\n")
                self._stdout.flush()

    async def _quit_alone(self, call: CommandCall) -> str:
        return texts.quit_alone()


class _TerminalStream:
    """The answer shown as it is written (`ReplyStream`)."""

    def __init__(self, screen: Screen) -> None:
        self._screen = screen

    async def update(self, text: str) -> None:
        self._screen.show_answer(text)

    async def finish(self, text: str) -> None:
        self._screen.finish_answer(text)


def screen_for(
    out: TextIO, typed: Callable[[], str], environ: Mapping[str, str] = os.environ
) -> Screen:
    """Markdown rendered on a colour terminal (`rich`, imported only now), else plain text."""
    if wants_plain(out, environ):
        drawable = is_terminal(out) and environ.get("TERM", "") not in ("", "dumb")
        return Screen(out, drawable, typed)  # a dumb terminal moves no cursor: no spinner
    from bot.adapters.terminal.rich_screen import MarkdownScreen

    return MarkdownScreen(out, typed, lambda: shutil.get_terminal_size())
