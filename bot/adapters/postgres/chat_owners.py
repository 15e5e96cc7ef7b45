"""Which process handles which chat of the Telegram inbox in PostgreSQL (`inbox.py`).

**One owner per chat, by advisory lock.** A chat's updates are handled by the one process
that holds the chat's advisory lock, in `update_id` order; chats are spread over processes
as their updates arrive. The locks are session-level locks on one connection per process
(`ChatOwners._owner`), held from a chat's first waiting update until it has none left. Why
this rather than a queue claimed with `FOR UPDATE SKIP LOCKED`: a row lock lives in a
transaction, so each chat being handled would hold a transaction, and a connection, open for
its whole turn (seconds of LLM), and a hundred busy chats would need a hundred connections;
one connection holds any number of advisory locks, costs no open transaction, and is what
ties ownership to the process's life: when a process dies, `kill -9` included, PostgreSQL
ends its session and its locks go with it.

- *Receiving.* The receiver inserts the update, which notifies every process
  (`NOTIFY telegram_inbox, '<slot>'`), answers Telegram, then tries the chat's lock. Got it:
  it hands out the chat's waiting updates. Not got: the holder, woken by the notification,
  hands it out.
- *Letting go.* An owner whose chat has nothing waiting unlocks it, then looks once more:
  an update whose receiver found the lock held was inserted before that attempt, so this
  second look sees it, and the owner takes the chat back (or another process already has).
- *Takeover.* Every `SWEEP_SECONDS` each process tries the locks of chats that have waiting
  updates and no owner in this process: those of a dead process are free, and the first to
  try takes them over, with what each update's turn had recorded (`starts`, `preview`,
  `answer`: the same replay as the file inbox's after a restart).

A chat is found by a 32-bit slot of its id (`pg_try_advisory_lock(LOCKS, slot)`); two chats
sharing a slot are simply owned together.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import AsyncConnection, sql

from bot.adapters.postgres.database import Database
from bot.ports.inbox import Deliver
from bot.retry import Backoff

log = logging.getLogger(__name__)

STORE = "Telegram inbox"
LOCKS = 0x7467  # "tg": the first key of every chat lock, apart from other advisory locks
CHANNEL = "telegram_inbox"
SWEEP_SECONDS = 1.0
"""How often a process looks for chats with waiting updates and no owner (a dead process's):
the longest a takeover waits, beyond PostgreSQL noticing the death."""
PRUNE_SECONDS = 600.0
RECONNECT = Backoff(first_seconds=0.5, longest_seconds=10.0)


def slot_of(chat: str) -> int:
    """A chat's 32-bit lock key, the same in every process (Python's `hash` is not)."""
    return int.from_bytes(
        hashlib.blake2b(chat.encode(), digest_size=4).digest(), "big", signed=True
    )


@dataclass
class TurnState:
    """What a handed-out update's turn has recorded, kept in memory while this process holds
    it; `writes` are its notes on their way to the database, in order."""

    slot: int
    starts: int = 0
    preview: list[int] = field(default_factory=list)
    answer: str | None = None
    writes: asyncio.Task[None] | None = None


_Waiting = tuple[int, dict[str, Any], TurnState]
"""A waiting update: its id, its JSON, and what its turns have recorded."""


@dataclass
class _OwnedChat:
    """A chat (slot) this process holds: `wake` its worker; `news`: an update may have come
    since its last look (a notification, this process's own receipt, or just claimed)."""

    wake: asyncio.Event = field(default_factory=asyncio.Event)
    news: bool = True
    waiting: list[_Waiting] | None = None
    """Its waiting updates as read right after its lock was taken (`news` False then): the
    worker's first look, without a round trip of its own."""

    def tell(self, news: bool = True) -> None:
        self.news = self.news or news
        self.wake.set()


def _waiting(row: tuple[Any, ...]) -> _Waiting:
    """A row of `update_id, body, starts, preview, answer, slot`, as handed out."""
    update_id, body, starts, preview, answer, slot = row
    return update_id, json.loads(body), TurnState(slot, starts, list(preview), answer)


class ChatOwners:
    """The chats this process holds, each with a worker handing out its waiting updates in
    order, and the sweep and the listener that find chats to take over or to wake."""

    def __init__(
        self,
        database: Database,
        handed: dict[int, TurnState],
        journaled_here: Callable[[int], bool],
        prune: Callable[[], Awaitable[None]],
        sweep_seconds: float = SWEEP_SECONDS,
    ) -> None:
        """`handed`: the inbox's updates handed out and not finished, by id (a worker adds
        each one it hands out). `journaled_here`: whether a notification's backend is this
        process's own journal connection. `prune`: the journal's upkeep, run every
        `PRUNE_SECONDS` between sweeps."""
        self._database = database
        self._handed = handed
        self._journaled_here = journaled_here
        self._prune = prune
        self._sweep_seconds = sweep_seconds
        self._deliver: Deliver | None = None
        self._owner: AsyncConnection | None = None  # holds the chat locks; dies with us
        self._locking = asyncio.Lock()  # one lock statement at a time, `_owned` in step
        self._owned: dict[int, _OwnedChat] = {}  # slot -> its worker's state
        self._heard_while_locking: set[int] | None = None  # see `_try_lock`
        self._workers: set[asyncio.Task[None]] = set()  # chats' workers, claims
        self._background: list[asyncio.Task[None]] = []
        self.waiting = 0
        """Updates waiting in every process, as of the last sweep."""

    async def open(self, deliver: Deliver) -> None:
        """Connect the lock holder, listen for new updates, and take over every chat with
        waiting updates that no process holds (a restart's, a dead process's)."""
        self._deliver = deliver
        self._owner = await self._database.dedicated()
        self._background = [
            asyncio.create_task(self._listen(), name="telegram-inbox-listen"),
            asyncio.create_task(self._sweep_forever(), name="telegram-inbox-sweep"),
        ]
        await self._sweep()

    def stop_handing_out(self) -> None:
        """No update is handed out from now on (the inbox is closing)."""
        self._deliver = None

    async def close(self) -> None:
        """Stop the workers, the sweep and the listener, and let every chat go (closing the
        connection drops the locks)."""
        self._deliver = None
        for task in [*self._background, *self._workers]:
            task.cancel()
        for task in [*self._background, *self._workers]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._background = []
        self._owned.clear()
        if self._owner is not None:
            with contextlib.suppress(Exception):
                await self._owner.close()
        self._owner = None

    def claim(self, slots: list[int]) -> None:
        """Own the chats' slots, in the background (or wake their workers, when owned here
        already)."""
        self._in_background(self._claim(slots))

    def tell(self, slot: int, news: bool = True) -> None:
        """Wake the worker of `slot`, when this process holds it: an update of it finished
        (`news` False), or may have come."""
        chat = self._owned.get(slot)
        if chat is not None:
            chat.tell(news)

    async def _claim(self, slots: list[int]) -> None:
        """Own the chats' slots (or wake their workers, when owned here already)."""
        for slot in slots:
            if slot in self._owned:
                self._owned[slot].tell()
        try:
            for slot in await self._try_lock(slots):
                self._start_worker(slot)
        except Exception as exc:  # their owner, or the next sweep, hands them out
            log.warning("[Telegram] could not claim a chat: %s", exc)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._workers.add(task)
        task.add_done_callback(self._workers.discard)

    async def _try_lock(self, slots: list[int]) -> list[int]:
        """The slots of `slots` this process got (never one it holds: a session lock taken
        twice would need two unlocks), each with its waiting updates, read in the same round
        trip (a pipeline) by a second statement, whose snapshot is taken after the lock: it
        sees every update journaled before the lock was got. One journaled later, whose
        notification came before the chat was registered here, is noted by the listener
        (`_heard_while_locking`), and the worker looks again."""
        async with self._locking:
            wanted = [slot for slot in slots if slot not in self._owned]
            if self._owner is None or not wanted:
                return []
            self._heard_while_locking = set()
            try:
                async with self._owner.pipeline():
                    locked = await self._owner.execute(
                        "SELECT slot FROM unnest(%s::integer[]) AS slot"
                        " WHERE pg_try_advisory_lock(%s, slot)",
                        (wanted, LOCKS),
                    )
                    waiting = await self._owner.execute(
                        "SELECT update_id, body, starts, preview, answer, slot FROM telegram_inbox"
                        " WHERE slot = ANY(%s::integer[]) AND NOT done ORDER BY update_id",
                        (wanted,),
                    )
                got = [row[0] for row in await locked.fetchall()]
                rows = await waiting.fetchall()
            except Exception:  # never keep a lock this process does not know it holds
                with contextlib.suppress(Exception):
                    await self._owner.execute(
                        "SELECT pg_advisory_unlock(%s, slot) FROM unnest(%s::integer[]) AS slot",
                        (LOCKS, wanted),
                    )
                raise
            finally:
                heard, self._heard_while_locking = self._heard_while_locking, None
            for slot in got:
                self._owned[slot] = _OwnedChat(news=slot in heard)
                self._owned[slot].waiting = [_waiting(row) for row in rows if row[5] == slot]
            return got

    async def _release(self, slot: int) -> bool:
        """Let the chat go, then look once more, in one round trip: an update whose receiver
        found the lock held was inserted before, and the second statement (a snapshot of
        its own) sees it. True when one waits and this process got the chat back."""
        async with self._locking:
            if self._owned.pop(slot, None) is None or self._owner is None:
                return False
            cursor = await self._owner.execute(
                sql.SQL(
                    "SELECT pg_advisory_unlock({locks}, {slot});"
                    " SELECT pg_try_advisory_lock({locks}, {slot}) WHERE EXISTS"
                    " (SELECT 1 FROM telegram_inbox WHERE slot = {slot} AND NOT done)"
                ).format(locks=sql.Literal(LOCKS), slot=sql.Literal(slot))
            )
            cursor.nextset()
            row = await cursor.fetchone()
            if row is None or not row[0]:
                return False
            self._owned[slot] = _OwnedChat()
            return True

    def _start_worker(self, slot: int) -> None:
        self._in_background(self._serve(slot))

    async def _serve(self, slot: int) -> None:
        """Hand out the slot's waiting updates in order, as they come; once none of them is
        in progress here and no news came, let the chat go (see the module docstring)."""
        chat = self._owned.get(slot)
        try:
            while chat is not None and self._owned.get(slot) is chat and self._deliver:
                chat.wake.clear()
                if chat.news or chat.waiting is not None:
                    waiting, chat.waiting = chat.waiting, None
                    if chat.news or waiting is None:
                        chat.news = False
                        waiting = await self._waiting_in(slot)
                    for update_id, data, state in waiting:
                        if update_id not in self._handed and self._deliver is not None:
                            self._handed[update_id] = state
                            await self._deliver(data)
                if any(state.slot == slot for state in self._handed.values()):
                    await chat.wake.wait()
                elif chat.news:
                    continue
                elif not await self._release(slot):
                    return
                else:
                    chat = self._owned[slot]  # got it back: a new turn of ownership
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database went away: the chat waits for a sweep
            log.warning("[Telegram] handing out a chat's updates failed: %s", exc)
        with contextlib.suppress(Exception):
            await self._let_go(slot, chat)

    async def _let_go(self, slot: int, chat: _OwnedChat | None) -> None:
        """Unlock without looking again (closing, or the database failed), unless the slot
        is no longer this worker's (lost with the connection, or claimed anew since)."""
        async with self._locking:
            if chat is None or self._owned.get(slot) is not chat or self._owner is None:
                return
            del self._owned[slot]
            await self._owner.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCKS, slot))

    async def _waiting_in(self, slot: int) -> list[_Waiting]:
        async with self._database.connection(STORE, retry=True) as connection:
            cursor = await connection.execute(
                "SELECT update_id, body, starts, preview, answer, slot FROM telegram_inbox"
                " WHERE slot = %s AND NOT done ORDER BY update_id",
                (slot,),
            )
            rows = await cursor.fetchall()
        return [_waiting(row) for row in rows]

    async def _sweep(self) -> None:
        """Take over chats with waiting updates that nobody holds; count what waits. Run on
        the lock holder's connection, so a broken one is noticed within a sweep."""
        async with self._locking:
            if self._owner is None:
                return
            cursor = await self._owner.execute(
                "SELECT slot, count(*) FROM telegram_inbox WHERE NOT done GROUP BY slot"
            )
            waiting: dict[int, int] = dict(await cursor.fetchall())
        self.waiting = sum(waiting.values())
        for slot in await self._try_lock(sorted(waiting)):
            log.info(
                "[Telegram] handling %d waiting update(s) of a chat nobody held", waiting[slot]
            )
            self._start_worker(slot)

    async def _sweep_forever(self) -> None:
        failures = 0
        pruned = time.monotonic()
        while True:
            await asyncio.sleep(self._sweep_seconds)
            try:
                if self._owner is None or self._owner.closed:
                    await self._reconnect_owner()
                await self._sweep()
                if time.monotonic() - pruned > PRUNE_SECONDS:
                    await self._prune()
                    pruned = time.monotonic()
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                log.warning("[Telegram] looking for waiting updates failed: %s", exc)
                await asyncio.sleep(RECONNECT.after(failures))

    async def _reconnect_owner(self) -> None:
        """The lock holder's connection broke: its locks are gone, so are the chats this
        process held (their workers stop); a fresh connection starts over with a sweep."""
        async with self._locking:
            for chat in self._owned.values():
                chat.tell()  # each worker sees its slot gone and ends
            self._owned.clear()
            self._owner = await self._database.dedicated()
        log.warning("[Telegram] the inbox's lock connection was lost; chats are claimed anew")

    async def _listen(self) -> None:
        """Wake the worker of a chat this process holds when another process journals an
        update of it (commands such as `/stop` must not wait for the turn before them)."""
        failures = 0
        while True:
            try:
                async with await self._database.dedicated() as connection:
                    await connection.execute(f"LISTEN {CHANNEL}")
                    failures = 0
                    async for notice in connection.notifies():
                        slot = int(notice.payload)
                        chat = self._owned.get(slot)
                        if chat is not None and not self._journaled_here(notice.pid):
                            chat.tell()
                        elif chat is None and self._heard_while_locking is not None:
                            self._heard_while_locking.add(slot)
            except (psycopg.Error, OSError, ValueError) as exc:
                failures += 1
                log.warning("[Telegram] listening for new updates failed (%s); again soon", exc)
                await asyncio.sleep(RECONNECT.after(failures))
