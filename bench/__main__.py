"""`python -m bench`: every benchmark, one table of figures against their targets."""

from __future__ import annotations

from bench import memory_recall, memory_retrieval, turn_overhead
from bench.report import print_table


def main() -> None:
    figures = []
    figures += turn_overhead.run()
    figures += memory_retrieval.run()
    figures += memory_recall.run()
    print()
    print_table(figures)


if __name__ == "__main__":
    main()
