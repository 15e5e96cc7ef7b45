"""The process-wide policies `python -m bot` applies (`bot/runtime.py`)."""

from __future__ import annotations

import logging

from bot.runtime import apply_process_policies


def _record(logger: str, message: str, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord(logger, level, __file__, 1, message, None, None)


def test_telegram_never_logs_whole_updates_even_with_the_root_at_debug():
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.DEBUG)
    try:
        apply_process_policies()
        assert not logging.getLogger("telegram").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("httpx").isEnabledFor(logging.INFO), "no request URLs"
    finally:
        root.setLevel(before)
        apply_process_policies()


def test_psycopgs_second_error_of_an_outage_is_dropped_and_others_pass():
    apply_process_policies()
    apply_process_policies()  # applying twice adds nothing twice
    psycopg_logger = logging.getLogger("psycopg")
    assert len(psycopg_logger.filters) == 1
    assert not psycopg_logger.filter(_record("psycopg", "error ignored terminating <x>"))
    assert psycopg_logger.filter(_record("psycopg", "something else"))
    assert not logging.getLogger("psycopg.pool").isEnabledFor(logging.WARNING)
