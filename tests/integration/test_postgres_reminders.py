"""Reminders of several processes on one PostgreSQL database: whichever process a reminder
was set in, one process delivers it, once; when that one stops or loses its connection,
another takes over and sends again what it had marked `firing`, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest

from bot.adapters.postgres.database import Database
from bot.adapters.postgres.reminders import DELIVERY_LOCK, PostgresReminderBook, ReminderLease
from bot.adapters.postgres.sessions import PostgresSessionStore
from bot.chat_locks import ChatLanes
from bot.config.model import RemindersConfig
from bot.conversation import ChatAddress
from bot.reminders import ReminderDesk, Requester
from bot.reminders.scheduler import ReminderScheduler
from tests.fakes.channel import RecordingChannel
from tests.fakes.clock import FakeClock
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.postgres

ALICE = Requester(ChatAddress("test", "alice"), "alice")
CHECK_SECONDS = 0.05


class Process:
    """What one bot process wires for reminders, on its own connections to the database."""

    def __init__(self, url: str, clock: FakeClock) -> None:
        self.database = Database(url)
        self.book = PostgresReminderBook(self.database)
        self.sessions = PostgresSessionStore(self.database)
        self.lease = ReminderLease(url, check_seconds=CHECK_SECONDS)
        self.channel = RecordingChannel()
        self.scheduler = ReminderScheduler(
            self.book, self.sessions, ChatLanes(), clock, lease=self.lease
        )
        self.scheduler.deliver_through(self.channel)
        self.desk = ReminderDesk(self.book, RemindersConfig, clock, self.scheduler.wake)

    async def start(self) -> Process:
        await self.database.open()
        await self.scheduler.start()
        return self

    async def stop(self) -> None:
        await self.scheduler.stop()
        await self.database.close()


def holder_of_the_lock(url: str) -> int | None:
    """The server process (pid) of the connection holding the delivery lock."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND ((classid::bigint << 32) | objid::bigint) = %s AND objsubid = 1",
            (DELIVERY_LOCK,),
        ).fetchone()
    return int(row[0]) if row else None


async def until_none_left(process: Process, within: float = 10.0) -> None:
    """Wait until every delivery is done (the book empties after the session record)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while await process.book.all():
        assert loop.time() < deadline, "reminders still kept"
        await asyncio.sleep(0.02)


async def session_texts(process: Process) -> list[str]:
    session = await process.sessions.load(ALICE.address.session_key)
    return [m.content or "" for m in session.messages]


@pytest.fixture
async def processes(database_url) -> AsyncIterator[tuple[FakeClock, Process, Process]]:
    """Two processes on one database and one hand-moved clock; the first started leads."""
    clock = FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    first = await Process(database_url, clock).start()
    second = await Process(database_url, clock).start()
    yield clock, first, second
    await first.stop()
    await second.stop()


async def test_one_of_two_processes_delivers_and_the_other_takes_over_when_it_stops(processes):
    clock, first, second = processes
    assert first.scheduler.leading and not second.scheduler.leading
    await second.desk.add(ALICE, "call Olga", in_minutes=1)  # set where it is not delivered
    clock.advance(61)
    await wait_until(lambda: len(first.channel.sent) == 1, what="the deliverer's look")
    assert first.channel.sent[0][1].startswith("⏰ Reminder: call Olga")
    await until_none_left(first)
    assert second.channel.sent == []

    cut = await second.desk.add(ALICE, "cut short", in_minutes=1)
    occurrence = cut.next_at
    assert occurrence is not None
    # The deliverer leaves with this one marked `firing`, as a kill after the mark does.
    await first.book.update(cut.model_copy(update={"firing": occurrence}))
    await first.scheduler.stop()
    clock.advance(61)
    await wait_until(lambda: second.scheduler.leading, what="the takeover")
    await wait_until(lambda: len(second.channel.sent) == 1)
    assert second.channel.sent[0][1].startswith("⏰ Reminder: cut short")
    await until_none_left(second)
    assert len(first.channel.sent) == 1
    texts = await session_texts(second)
    assert [t.split("\n")[0] for t in texts] == [
        "⏰ Reminder: call Olga",
        "⏰ Reminder: cut short",
    ]


async def test_a_deliverer_that_loses_its_connection_stops_and_only_one_delivers(
    processes, database_url
):
    clock, first, second = processes
    holder = holder_of_the_lock(database_url)
    assert holder is not None and first.scheduler.leading
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (holder,))
    # the lock is free, and each process asks for it: one gets it, the other does not
    await wait_until(lambda: holder_of_the_lock(database_url) not in (None, holder))
    await wait_until(lambda: first.scheduler.leading != second.scheduler.leading)
    for n in range(3):
        await first.desk.add(ALICE, f"after the cut {n}", in_minutes=1)
    clock.advance(61)
    await wait_until(lambda: len(first.channel.sent) + len(second.channel.sent) == 3)
    await until_none_left(first)
    senders = [p for p in (first, second) if p.channel.sent]
    assert len(senders) == 1 and senders[0].scheduler.leading


async def test_a_reminder_due_soon_set_in_another_process_is_noticed_within_the_check(processes):
    clock, first, second = processes
    later = await first.desk.add(ALICE, "later", in_minutes=120)
    await wait_until(lambda: first.scheduler.sleeping_until == later.next_at)
    sooner = await second.desk.add(ALICE, "sooner", in_minutes=5)  # wakes only `second`
    await wait_until(lambda: first.scheduler.sleeping_until == sooner.next_at)
    clock.advance(5 * 60)
    await wait_until(lambda: [t for _, t in first.channel.sent if "sooner" in t] != [])
    assert second.channel.sent == []


async def test_a_row_this_version_cannot_read_is_left_alone_and_the_others_go_on(
    processes, database_url, caplog
):
    clock, first, _ = processes
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(
            "INSERT INTO reminders (id, user_id, session_key, next_at, due_at, interrupted, "
            "reminder) VALUES ('bad', 'alice', 'test:alice', %s, %s, false, %s::jsonb)",
            (clock.now, clock.now, '{"id": "bad"}'),
        )
    await first.desk.add(ALICE, "still delivered", in_minutes=1)
    clock.advance(61)
    await wait_until(lambda: len(first.channel.sent) == 1)
    assert first.channel.sent[0][1].startswith("⏰ Reminder: still delivered")
    unreadable = [
        r for r in caplog.records if "reminder bad in the database is unreadable" in r.message
    ]
    assert len(unreadable) == 1
    assert [r.id for r in await first.book.in_chat(ALICE.address.session_key)] == []
