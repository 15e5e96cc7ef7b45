"""`python -m bench`: every benchmark, one table of figures against their targets."""

from __future__ import annotations

import logging

from bench import (
    attacks,
    media_reading,
    memory_generalisation,
    memory_longconv,
    memory_recall,
    memory_retrieval,
    rag_degradation,
    rag_many_users,
    reply_latency,
    several_processes,
    telegram_concurrency,
    turn_overhead,
    voice_latency,
)
from bench.report import print_table


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    figures = []
    for benchmark in (
        turn_overhead,
        telegram_concurrency,
        several_processes,
        voice_latency,
        reply_latency,
        rag_degradation,
        rag_many_users,
        memory_retrieval,
        memory_generalisation,
        memory_recall,
        memory_longconv,
        attacks,
        media_reading,
    ):
        print(f"running {benchmark.__name__} ...", flush=True)
        figures += benchmark.run()
    print()
    print_table(figures)


if __name__ == "__main__":
    main()
