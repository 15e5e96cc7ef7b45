"""Run as a child process (`IsolatedScript`): the first occurrences of a repeating rule.

A rule that never happens (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30`) makes python-dateutil search
every day up to the year 9999, seconds of CPU; so a new rule is first expanded here, where it
can be killed, and only a rule that yields occurrences reaches the bot's own event loop.

stdin: {"rule": ..., "anchor": local ISO time, "after": local ISO time, "count": n}
stdout: {"occurrences": [local ISO times]} or {"error": text}
"""

from __future__ import annotations

import json
import sys
from datetime import datetime


def first_occurrences(rule: str, anchor: str, after: str, count: int) -> list[str]:
    from dateutil.rrule import rrulestr

    parsed = rrulestr(rule, dtstart=datetime.fromisoformat(anchor))
    found: list[str] = []
    moment = datetime.fromisoformat(after)
    for _ in range(count):
        following = parsed.after(moment, inc=not found)
        if following is None:
            break
        found.append(following.isoformat())
        moment = following
    return found


def main() -> None:
    request = json.loads(sys.stdin.read())
    try:
        found = first_occurrences(
            request["rule"], request["anchor"], request["after"], int(request["count"])
        )
    except (ValueError, TypeError, KeyError, OverflowError) as exc:
        print(json.dumps({"error": str(exc) or type(exc).__name__}))
        return
    print(json.dumps({"occurrences": found}))


if __name__ == "__main__":
    main()
