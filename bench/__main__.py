"""`python -m bench`: every benchmark, one table of figures against their targets.

Each benchmark runs in a process of its own (`python -m bench --one NAME`), so one that crashes,
hangs past `--timeout` or leaves threads, servers or garbage-collector state behind cannot stop
or skew the others: its failure becomes a row of the table and the rest still run. The child
hands its figures back as JSON in a file; its own output and traceback go to the terminal.

    python -m bench [--only NAME ...] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.report import Figure, print_table
from bot.runtime import apply_process_policies

BENCHMARKS = (
    "turn_overhead",
    "telegram_concurrency",
    "memory_load",
    "several_processes",
    "voice_latency",
    "reply_latency",
    "rag_degradation",
    "rag_many_users",
    "memory_retrieval",
    "memory_generalisation",
    "memory_recall",
    "memory_longconv",
    "attacks",
    "media_reading",
)
TIMEOUT_SECONDS = 1800.0
"""The longest one benchmark may run (`rag_many_users` takes several minutes on 2 busy cores)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", nargs="+", choices=BENCHMARKS, metavar="NAME", help=", ".join(BENCHMARKS)
    )
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS, help="per benchmark")
    parser.add_argument("--one", choices=BENCHMARKS, help=argparse.SUPPRESS)
    parser.add_argument("--figures-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        return run_here(args.one, args.figures_to)
    figures: list[Figure] = []
    for name in args.only or BENCHMARKS:
        print(f"running {name} ...", flush=True)
        figures += run_apart(name, args.timeout)
    print()
    print_table(figures)
    return 1 if any(f.failed for f in figures) else 0


def run_apart(name: str, timeout: float) -> list[Figure]:
    """`name`'s figures, measured in a child process; one failed row if it did not finish.
    The child leads a process group of its own, so a timeout also ends what it started (bot
    processes, servers)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "figures.json"
        command = [sys.executable, "-m", "bench", "--one", name, "--figures-to", str(out)]
        child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return [Figure.failure(name, f"no result within {timeout:g} s")]
        if child.returncode != 0 or not out.exists():
            sys.stderr.write(stderr)
            return [Figure.failure(name, _last_line(stderr, child.returncode))]
        return [Figure(**row) for row in json.loads(out.read_text())]


def run_here(name: str, figures_to: Path | None) -> int:
    """The child's side: run one benchmark in this process and write its figures as JSON."""
    logging.basicConfig(level=logging.ERROR)
    apply_process_policies()
    figures = importlib.import_module(f"bench.{name}").run()
    rows = [dataclasses.asdict(f) for f in figures]
    if figures_to is None:
        print_table(figures)
    else:
        figures_to.write_text(json.dumps(rows))
    return 0


def _last_line(stderr: str, returncode: int) -> str:
    """The error a failed child ended with (a traceback's last line), cut to fit a table."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else f"exited with status {returncode}"
    return last if len(last) <= 120 else last[:119] + "…"


if __name__ == "__main__":
    sys.exit(main())
