"""`python -m bench`: every benchmark, one table of figures against their targets."""

from __future__ import annotations

from bench import telegram_concurrency, turn_overhead
from bench.report import print_table


def main() -> None:
    figures = []
    figures += turn_overhead.run()
    figures += telegram_concurrency.run()
    print()
    print_table(figures)


if __name__ == "__main__":
    main()
