"""Logging set-up with a redactor, so no secret reaches a log line or a traceback."""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from bot.storage.atomic import UnsafePath, open_private

REDACTED = "***"
# python-telegram-bot puts the bot token in every request URL (".../bot<token>/getUpdates").
_TELEGRAM_TOKEN_IN_URL = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")


class ThrottledWarning:
    """A warning anyone outside can cause at will (a forged webhook post): logged at most
    once per `interval_seconds`, the next line counting the ones left out, so 2,000 posts
    cost a line a minute, not 2,000."""

    def __init__(
        self,
        logger: logging.Logger,
        message: str,
        interval_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._message = message
        self._interval = interval_seconds
        self._clock = clock
        self._last: float | None = None
        self._left_out = 0

    def __call__(self) -> None:
        now = self._clock()
        if self._last is not None and now - self._last < self._interval:
            self._left_out += 1
            return
        more = f" ({self._left_out} more since the last such line)" if self._left_out else ""
        self._logger.warning("%s%s", self._message, more)
        self._last, self._left_out = now, 0


class RedactingFormatter(logging.Formatter):
    """Formats a record, then blanks out every known secret in it, traceback included."""

    def __init__(self, fmt: str, secrets: Iterable[str] = ()) -> None:
        super().__init__(fmt)
        self._secrets: list[str] = []
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Remember more secrets; longest first so a secret that contains another goes whole."""
        # Stripped: a key given with a line break around it shows in logs without one.
        stripped = (s.strip() for s in secrets)
        merged = {*self._secrets, *(s for s in stripped if len(s) >= 4)}
        self._secrets = sorted(merged, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _TELEGRAM_TOKEN_IN_URL.sub("/bot" + REDACTED, text)


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def redact_also(secrets: Iterable[str]) -> None:
    """Blank `secrets` too in every log line from now on, whichever library writes it: for
    values known only while the bot runs (an MCP server's token read from the environment)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler.formatter, RedactingFormatter):
            handler.formatter.add_secrets(secrets)


def setup_logging(level: str, secrets: Iterable[str], log_file: Path | None = None) -> None:
    """Route all logs through the redactor: to `log_file` when given, else to stderr.

    With a log file (the terminal chat) every line goes there and none to stderr, which is the
    chat's screen: a warning would land in the middle of the conversation. Python's own
    warnings (`warnings.warn` in a library) are logged too rather than printed.
    """
    formatter = RedactingFormatter(LOG_FORMAT, secrets)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)

    refused: OSError | None = None
    if log_file is not None:
        try:
            os.close(open_private(log_file, os.O_WRONLY))  # 0600, not a symlink; appended to
        except UnsafePath:
            raise
        except OSError as exc:  # a full disk: log to stderr rather than not start
            refused, log_file = exc, None
    output: logging.Handler
    if log_file is not None:
        output = logging.FileHandler(log_file, encoding="utf-8")
    else:
        output = logging.StreamHandler(sys.stderr)
    output.setFormatter(formatter)
    root.addHandler(output)

    if refused is not None:
        logging.getLogger(__name__).error("[Logging] no log file (%s); logging to stderr", refused)
