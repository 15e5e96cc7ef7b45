"""Several processes on one token: messages per second and latency for 1, 2 and 3 bot
processes on PostgreSQL, against one bot on files, in the same run; and how long a killed
process's chats wait before another process takes them over.

Every bot runs as operators run it (`python -m bot`, webhook mode, behind a round-robin load
balancer: `tests/system/cluster.py`), against the emulated Bot API and an LLM that answers
after 200 ms; the PostgreSQL server is a throwaway one (`tests/fakes/postgres.py`). Load is
closed-loop: each of `--chats` chats sends its next message as soon as the last is answered,
`--messages` each, so the figures are what users see: messages answered per second, and the
95th percentile of the time from a message to its answer.

Takeover: with three processes, every chat sends a burst, whose first turns the LLM holds;
once Telegram has handed every update over, one process holding chats with updates waiting
behind those turns is killed (`kill -9`, frozen first so its waiting updates can be read),
the LLM answers again, and no further message is sent, so only the
periodic sweep (`SWEEP_SECONDS`) can find them: the figure is the time from the kill to the
first of its waiting updates reaching the LLM from another process, and to all of them
answered.

    python -m bench.several_processes [--chats 40] [--messages 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report import Figure, percentile, print_table
from bot.adapters.postgres.inbox import SWEEP_SECONDS
from tests.fakes.openai_server import FakeOpenAiServer, Reply
from tests.fakes.postgres import PostgresServer
from tests.fakes.telegram_server import FakeTelegramServer, User
from tests.system.cluster import Cluster, start_cluster
from tests.system.harness import TELEGRAM_TOKEN

NAME = "several processes"
LLM_DELAY = 0.2
FIRST_USER = 30_000
POLL_SECONDS = 0.005


class TimedLlm:
    """Echoes the question after `LLM_DELAY`; notes when each question first arrived. A
    question starting with "burst" is also held until `release` (takeover only)."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self._lock = threading.Lock()
        self._bursts = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        question = str(body["messages"][-1]["content"])
        with self._lock:
            self.arrived.setdefault(question, time.monotonic())
        hold = self._bursts if question.startswith("burst") else None
        return Reply(text=f"echo: {question}", delay=LLM_DELAY, hold=hold)

    def release(self) -> None:
        """Answer the held questions, and every later one, as usual."""
        self._bursts.set()


@dataclass
class Run:
    """One configuration's figures."""

    label: str
    per_second: float = 0.0
    latencies: list[float] = field(default_factory=list)


def closed_loop(telegram: FakeTelegramServer, users: list[int], messages: int, tag: str) -> Run:
    """Each chat sends its next message once its last is answered; returns the rate and
    each message's time to answer."""
    run = Run(tag)
    sent: dict[str, tuple[int, float]] = {}  # expected answer -> (chat, when asked)
    next_of = dict.fromkeys(users, 0)

    def ask(user: int) -> None:
        text = f"{tag} {user} #{next_of[user]}"
        next_of[user] += 1
        sent[f"echo: {text}"] = (user, time.monotonic())
        telegram.send_text(User(user, f"User {user}"), text)

    started = time.monotonic()
    seen = len(telegram.messages())
    for user in users:
        ask(user)
    answered = 0
    deadline = started + 60 + 2 * messages * LLM_DELAY * len(users)
    while answered < len(users) * messages:
        assert time.monotonic() < deadline, f"{tag}: not all answered"
        shown = telegram.messages()
        for message in shown[seen:]:
            asked = sent.pop(message.text, None)
            if asked is None:
                continue
            user, when = asked
            run.latencies.append(time.monotonic() - when)
            answered += 1
            if next_of[user] < messages:
                ask(user)
        seen = len(shown)
        time.sleep(POLL_SECONDS)
    run.per_second = answered / (time.monotonic() - started)
    return run


def measure_configuration(
    root: Path, database: PostgresServer | None, processes: int, chats: int, messages: int
) -> Run:
    label = f"{processes} process(es), PostgreSQL" if database else "1 process, files"
    users = list(range(FIRST_USER, FIRST_USER + chats))
    url = database.create_database() if database else None
    with (
        FakeTelegramServer(token=TELEGRAM_TOKEN) as telegram,
        FakeOpenAiServer(responder=TimedLlm()) as llm,
    ):
        cluster = start_cluster(root, telegram, llm.base_url, url, processes, users, "WARNING")
        try:
            closed_loop(telegram, users, 1, "warm-up")  # e5, pools, first sessions
            run = closed_loop(telegram, users, messages, "load")
        finally:
            cluster.stop()
    run.label = label
    return run


def measure_takeover(root: Path, database: PostgresServer, chats: int) -> tuple[float, float]:
    """Seconds from a `kill -9` to the first of the dead process's waiting updates reaching
    the LLM from another process, and to all of them answered."""
    users = list(range(FIRST_USER, FIRST_USER + chats))
    timed = TimedLlm()
    with (
        FakeTelegramServer(token=TELEGRAM_TOKEN) as telegram,
        FakeOpenAiServer(responder=timed) as llm,
    ):
        cluster = start_cluster(
            root, telegram, llm.base_url, database.create_database(), 3, users, "WARNING"
        )
        try:
            closed_loop(telegram, users, 1, "warm-up")
            for n in range(6):
                for user in users:
                    telegram.send_text(User(user, f"User {user}"), f"burst {user} #{n}")
            telegram.wait_for_sync(lambda: telegram.pending_updates == 0, within=60)
            # Each chat's first burst is held at the LLM, so the rest wait behind it however
            # fast the processes are: released once one process is dead.
            try:
                held, killed_at = _kill_one_holding_chats(cluster, timed)
            finally:
                timed.release()
            asked_before = set(timed.arrived)  # a question it sent just before it froze
            questions = [q for q in held if q not in asked_before]
            assert questions, "the killed process had updates waiting behind its turns"
            telegram.wait_for_sync(lambda: any(q in timed.arrived for q in questions), 60)
            first = min(timed.arrived[q] for q in questions if q in timed.arrived)
            expected = {f"echo: {q}" for q in questions}
            telegram.wait_for_sync(
                lambda: expected <= {m.text for m in telegram.messages()}, within=120
            )
            return first - killed_at, time.monotonic() - killed_at
        finally:
            cluster.stop()


def _kill_one_holding_chats(cluster: Cluster, timed: TimedLlm) -> tuple[list[str], float]:
    """Freeze (SIGSTOP) each process in turn until one holds chats with waiting updates not
    yet handed to the LLM (its turns in progress have been: they are waiting too); `kill -9`
    it. Returns those updates' questions and the kill's time."""
    for _ in range(200):
        for bot in cluster.bots:
            assert bot.process is not None
            os.kill(bot.process.pid, signal.SIGSTOP)
            ids = set(cluster.waiting_in_chats_of(bot))
            held = [
                str(w["update"]["message"]["text"])
                for w in cluster.waiting_updates()
                if w["update"]["update_id"] in ids
            ]
            # Two not asked yet: one may be on its way to the LLM as the process froze.
            if len([q for q in held if q not in timed.arrived]) >= 2:
                bot.process.kill()
                killed_at = time.monotonic()
                bot.process.wait(30)
                return held, killed_at
            os.kill(bot.process.pid, signal.SIGCONT)
        time.sleep(POLL_SECONDS)
    raise AssertionError("no process held a chat with updates waiting behind its turns")


def measure(chats: int, messages: int) -> list[Figure]:
    database = PostgresServer().start()
    runs: list[Run] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            runs.append(measure_configuration(root / "files", None, 1, chats, messages))
            for processes in (1, 2, 3):
                runs.append(
                    measure_configuration(
                        root / f"pg{processes}", database, processes, chats, messages
                    )
                )
            first, all_answered = measure_takeover(root / "takeover", database, chats)
    finally:
        database.stop()
    return _figures(runs, chats, messages, first, all_answered)


def _figures(
    runs: list[Run], chats: int, messages: int, first: float, all_answered: float
) -> list[Figure]:
    baseline = runs[0]
    load = f"{chats} chats x {messages}, LLM {LLM_DELAY:g} s"
    figures = []
    for run in runs:
        figures += [
            Figure(NAME, f"{run.label}: messages per second ({load})", run.per_second, "msg/s", ""),
            Figure(
                NAME, f"{run.label}: p95 time to answer", percentile(run.latencies, 95), "s", ""
            ),
        ]
        if run is not baseline:
            figures.append(
                Figure(
                    NAME,
                    f"{run.label} / 1 process on files: messages per second",
                    run.per_second / baseline.per_second,
                    "x",
                    "",
                )
            )
    figures += [
        Figure(
            NAME,
            f"takeover after kill -9: first waiting update handled (sweep {SWEEP_SECONDS:g} s)",
            first,
            "s",
            f"<= {SWEEP_SECONDS + 1:g}",
            first <= SWEEP_SECONDS + 1,
        ),
        Figure(
            NAME, "takeover after kill -9: all its waiting updates answered", all_answered, "s", ""
        ),
    ]
    return figures


def run(chats: int = 40, messages: int = 5) -> list[Figure]:
    return measure(chats, messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument("--messages", type=int, default=5, help="messages per chat")
    args = parser.parse_args()
    print_table(run(args.chats, args.messages))


if __name__ == "__main__":
    main()
