"""The process-wide policies `python -m bot` applies (`bot/runtime.py`)."""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys
from pathlib import Path

import pytest

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


SMALL_MEMORY = """
import json, sys
from bot.runtime import small_memory
took = small_memory()
import numpy as np
block = np.ones(64 * 1024 * 1024 // 8)  # 64 MB, touched
rollup = open("/proc/self/smaps_rollup").read().splitlines()
huge = next(int(line.split()[1]) for line in rollup if line.startswith("AnonHugePages:"))
print(json.dumps({"took": took, "huge_kb": huge, "block": float(block.sum())}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc: Linux")
def test_small_memory_keeps_numpy_off_huge_pages_and_sets_glibc():
    # A fresh interpreter: numpy reads its setting when imported, glibc's arenas are made once.
    done = subprocess.run(
        [sys.executable, "-c", SMALL_MEMORY],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["took"] is (platform.libc_ver()[0] == "glibc")
    assert result["huge_kb"] == 0  # without the policy: 63 MB here (THP "madvise")
