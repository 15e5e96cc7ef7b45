"""Delivers reminders when they are due: a plain message, no LLM call, through the chat's lane.

One task sleeps until the soonest due time (at most the lease's `check_seconds`: 60 s with
files, so a wall clock that jumps is noticed) and is woken at once when a reminder is added
or cancelled in this process, or a channel joins. Each delivery runs as a task of its own, so
a chat whose turn is long holds up only its own reminder.

**One deliverer.** Only the process holding the `DeliveryLease` delivers. With files that is
the one process the data dir's lock lets in (`SoleProcess`). With PostgreSQL it is the
process holding an advisory lock (`bot/adapters/postgres/reminders.py`): the others ask for it
every few seconds and the first to get it after the holder dies takes over, starting with
what the dead one left marked below, exactly as a restart does. The same few seconds are how
the deliverer notices a reminder another process added.

Delivery, and what a `kill -9` at each step does (the inbox's "answered" receipt, applied to
reminders):

1. in the chat's turn lane (after the turn running there, so the session is not written twice)
   the occurrence is marked `firing` on disk;
2. the message is sent;
3. the receipt: `firing` cleared, the next time set (a repeating one's first time after now:
   one message after a long outage, never a storm of missed ones), the text kept as
   `unrecorded`, on disk;
4. the text goes into the chat's session as an assistant message (its `external_id` names the
   occurrence, so it is never recorded twice), and `unrecorded` is cleared.

Killed before 1: due at the next start, delivered once then (late, and saying so). Between 1
and 3: sent again at the next start; it arrives twice only when the kill falls after Telegram
accepted the message and before the receipt's write (one fsync) ended. After 3: never sent
again; 4 is done at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol

from bot.chat_locks import ChatLanes
from bot.conversation import ChatMessage
from bot.conversation.messages import utc_now
from bot.i18n import speaking
from bot.i18n.catalogue import reminders as say
from bot.ports.channel import ChannelPort
from bot.ports.language import LanguagePreference
from bot.ports.sessions import SessionStore
from bot.reminders.book import ReminderStore
from bot.reminders.model import Reminder
from bot.reminders.times import next_occurrence, re_anchored, shown, utc_of, zone_named
from bot.retry import Backoff
from bot.storage.languages import LanguageChoices

log = logging.getLogger(__name__)

MAX_SLEEP_SECONDS = 60.0
LATE_AFTER = timedelta(minutes=2)
"""A delivery later than this says when it was due."""
DELIVERY_BACKOFF = Backoff(first_seconds=30, longest_seconds=3600, jitter=0.1)
DELIVERY_ATTEMPTS = 10
"""Failed deliveries of one occurrence (Telegram down, the bot blocked) before it is given up
(a repeating reminder then moves to its next time); about three hours in all."""
RECORDED_LOOKBACK = 200
LOOK_AHEAD = 100
"""Reminders read per look, soonest first: also the most deliveries under way at once."""


class DeliveryLease(Protocol):
    """Whether this process is the one that delivers reminders."""

    check_seconds: float
    """How often the scheduler looks again: at the lease, and at reminders other processes
    may have added."""

    async def held(self) -> bool:
        """Held now (taken when free); False while another process holds it, or it is lost."""
        ...

    async def release(self) -> None: ...


class SoleProcess:
    """The lease with files: the data dir's lock already lets one process in."""

    check_seconds = MAX_SLEEP_SECONDS

    async def held(self) -> bool:
        return True

    async def release(self) -> None:
        return None


class ReminderScheduler:
    """Fires due reminders of the book through the channels it was given."""

    def __init__(
        self,
        book: ReminderStore,
        sessions: SessionStore,
        lanes: ChatLanes,
        clock: Callable[[], datetime] = utc_now,
        languages: LanguagePreference | None = None,
        lease: DeliveryLease | None = None,
    ) -> None:
        """`languages`: each person's `/language`; a reminder speaks its setter's (it is sent
        outside any message, so no message sets the language). `lease`: whether this process
        delivers (default: the only one)."""
        self._book = book
        self._lease: DeliveryLease = lease or SoleProcess()
        self.leading = False
        """This process delivers (it holds the lease, and has finished what a stop left)."""
        self._told_following = False
        self._languages = languages or LanguageChoices(None)
        self._sessions = sessions
        self._lanes = lanes
        self._clock = clock
        self._channels: dict[str, ChannelPort] = {}
        self._wake = asyncio.Event()
        self._firing: dict[str, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        """`stop` was asked for: the loop ends at its next step, whether or not the
        cancellation reached it (see `stop`)."""
        self.sleeping_until: datetime | None = None
        """The due time the scheduler sleeps until (None: until woken); for `/status` and tests."""
        self.asleep = asyncio.Event()
        """Set while the scheduler sleeps, with nothing left to start."""

    @property
    def book(self) -> ReminderStore:
        """The reminders it delivers."""
        return self._book

    def deliver_through(self, channel: ChannelPort) -> None:
        """Reminders set in `channel` (by its `name`) are delivered from now on."""
        self._channels[channel.name] = channel
        self.wake()

    def wake(self) -> None:
        """Look again now: a reminder was added or cancelled (or a test moved the clock)."""
        self.asleep.clear()
        self._wake.set()

    async def start(self) -> None:
        """When this process delivers: record deliveries a kill left out of their sessions.
        Then start the loop, unless `stop` was asked for meanwhile."""
        self._stopping = False
        await self._lead()
        if not self._stopping:
            self._task = asyncio.create_task(self._run(), name="reminders")

    async def _lead(self) -> bool:
        """Whether this process delivers now. On taking the lease (at start, or from a process
        that died), first finish what a stop left: the deliveries it sent but did not record;
        those it marked `firing` are due, so they are sent again."""
        if not await self._lease.held():
            if self.leading or not self._told_following:
                log.info(
                    "[Reminders] another process delivers the reminders; "
                    "this one takes over if it stops"
                )
            self.leading, self._told_following = False, True
            return False
        if self.leading:
            return True
        interrupted = await self._book.interrupted()
        for reminder in interrupted:
            if reminder.unrecorded is not None:
                async with self._lanes.turn(reminder.session_key):
                    text = reminder.unrecorded_text
                    await self._record_once(reminder, reminder.unrecorded, text)
                cleared = reminder.model_copy(update={"unrecorded": None, "unrecorded_text": ""})
                await self._keep(cleared)
        resent = sum(1 for r in interrupted if r.firing is not None)
        if resent:
            log.warning("[Reminders] %d delivery(ies) were cut short by a stop; sent again", resent)
        self.leading = True
        return True

    async def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop the loop; deliveries under way get `grace_seconds` to finish, then are cancelled
        (and sent again at the next start, as their `firing` mark says).

        The loop is cancelled and also told by a flag it reads after every look: a cancellation
        can be lost on the way, as Python 3.11's `asyncio.wait_for` loses one that comes as the
        awaited answer arrives (psycopg_pool waits for a connection with it), and the loop would
        then sleep and look again for ever."""
        self._stopping = True
        self.wake()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        under_way = list(self._firing.values())
        if under_way:
            _, late = await asyncio.wait(under_way, timeout=grace_seconds)
            for task in late:
                task.cancel()
            await asyncio.gather(*under_way, return_exceptions=True)
        await self._lease.release()
        self.leading = False

    async def fire_due(self) -> None:
        """Deliver everything due now, and wait until that is done (tests call this)."""
        if await self._lead():
            started, _ = await self._start_due()
            await asyncio.gather(*started, return_exceptions=True)

    async def _run(self) -> None:
        unreachable = False
        while not self._stopping:
            self._wake.clear()
            due = None
            try:
                if await self._lead():
                    _, due = await self._start_due()
                unreachable = False
            except Exception as exc:  # the store is away (OSError), or a bug: look again later
                if not unreachable:
                    trace = not isinstance(exc, OSError)
                    log.error("[Reminders] cannot read the reminders: %s", exc, exc_info=trace)
                unreachable = True
            if self._stopping:
                return
            self.sleeping_until = due
            seconds = self._lease.check_seconds
            if due is not None:
                seconds = min(max((due - self._clock()).total_seconds(), 0.0), seconds)
            self.asleep.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await self._wake.wait()
            self.asleep.clear()

    async def _start_due(self) -> tuple[list[asyncio.Task[None]], datetime | None]:
        """Start the deliveries due now (with a channel to go through, none under way);
        returns them and the next due time after them."""
        now = self._clock()
        started, following = [], None
        for reminder in await self._book.soonest(LOOK_AHEAD):
            if reminder.channel not in self._channels or reminder.id in self._firing:
                continue
            if reminder.due_at is None or reminder.due_at > now:
                following = following or reminder.due_at
                continue
            task = asyncio.create_task(self._fire(reminder.id), name=f"reminder {reminder.id}")
            self._firing[reminder.id] = task
            task.add_done_callback(partial(self._done, reminder.id))
            started.append(task)
        return started, following

    def _done(self, reminder_id: str, _: asyncio.Task[None]) -> None:
        self._firing.pop(reminder_id, None)
        self.wake()

    async def _fire(self, reminder_id: str) -> None:
        try:
            reminder = await self._book.get(reminder_id)
            if reminder is None:
                return
            async with self._lanes.turn(reminder.session_key):
                await self._deliver(reminder_id)
        except Exception as exc:  # one reminder's bug must not stop the others
            log.error("[Reminders] #%s failed: %s", reminder_id, exc, exc_info=True)

    async def _deliver(self, reminder_id: str) -> None:
        reminder = await self._book.get(reminder_id)  # again: it may have gone while waiting
        if reminder is None or reminder.due_at is None:
            return
        occurrence = reminder.firing or reminder.next_at
        if occurrence is None:
            return
        if reminder.firing is None:
            reminder = reminder.model_copy(update={"firing": occurrence})
            await self._keep(reminder)
        text = self._message(reminder, occurrence)
        try:
            await self._channels[reminder.channel].send(reminder.address, text)
        except Exception as exc:
            await self._failed(reminder, occurrence, exc)
            return
        delivered = self._receipt(reminder, occurrence, text)
        await self._keep(delivered)
        log.info("[Reminders] #%s delivered to %s", reminder.id, reminder.session_key)
        await self._record_once(delivered, occurrence, text)
        await self._keep(delivered.model_copy(update={"unrecorded": None, "unrecorded_text": ""}))

    def _message(self, reminder: Reminder, occurrence: datetime) -> str:
        """The text sent, in its setter's language: their `/language` choice now, else the
        language they were spoken to in when they set it. The session records this same text."""
        language = self._languages.language_for(reminder.user_id, reminder.language)
        with speaking(language):
            zone = zone_named(reminder.zone)
            lines = [say.reminder_due(reminder.text)]
            if self._clock() - occurrence > LATE_AFTER:
                lines.append(say.reminder_was_due(shown(occurrence, zone)))
            following = self._following(reminder, occurrence)
            if following is not None:
                lines.append(say.reminder_next(shown(following, zone)))
            lines.append(say.reminder_footer(reminder.id))
            return "\n".join(lines)

    def _following(self, reminder: Reminder, occurrence: datetime) -> datetime | None:
        """A repeating reminder's next time after this delivery (UTC)."""
        local = self._following_local(reminder, occurrence)
        return None if local is None else utc_of(local, zone_named(reminder.zone))

    def _following_local(self, reminder: Reminder, occurrence: datetime) -> datetime | None:
        """The next time as the rule gives it (local wall time): the first after now, so an
        outage of a week sends one message, not one per missed time."""
        if not reminder.repeat or reminder.anchor is None:
            return None
        after = max(self._clock(), occurrence)
        return next_occurrence(reminder.repeat, reminder.anchor, zone_named(reminder.zone), after)

    def _receipt(self, reminder: Reminder, occurrence: datetime, text: str) -> Reminder:
        following = self._following_local(reminder, occurrence)
        anchor, next_at = reminder.anchor, None
        if following is not None and reminder.repeat and anchor is not None:
            anchor = re_anchored(reminder.repeat, anchor, following)  # the next walk starts there
            next_at = utc_of(following, zone_named(reminder.zone))
        return reminder.model_copy(
            update={
                "firing": None,
                "anchor": anchor,
                "next_at": next_at,
                "unrecorded": occurrence,
                "unrecorded_text": text,
                "failures": 0,
                "retry_at": None,
                "delivered": reminder.delivered + 1,
            }
        )

    async def _failed(self, reminder: Reminder, occurrence: datetime, error: Exception) -> None:
        failures = reminder.failures + 1
        if failures >= DELIVERY_ATTEMPTS:
            log.error(
                "[Reminders] #%s not delivered after %d tries (%s); given up",
                reminder.id,
                failures,
                error,
            )
            following = self._following(reminder, occurrence)
            update = {"firing": None, "next_at": following, "failures": 0, "retry_at": None}
            await self._keep(reminder.model_copy(update=update))
            return
        rest = DELIVERY_BACKOFF.after(failures)
        log.warning(
            "[Reminders] #%s not delivered (%s); trying again in %.0fs", reminder.id, error, rest
        )
        retry_at = self._clock() + timedelta(seconds=rest)
        await self._keep(reminder.model_copy(update={"failures": failures, "retry_at": retry_at}))

    async def _record_once(self, reminder: Reminder, occurrence: datetime, text: str) -> None:
        """The delivered text joins the chat's session, so the next turn knows what "it" is."""
        key = reminder.occurrence_key(occurrence)
        session = await self._sessions.load(reminder.session_key)
        if any(m.external_id == key for m in session.messages[-RECORDED_LOOKBACK:]):
            return
        session.messages.append(
            ChatMessage(role="assistant", content=text, at=utc_now(), external_id=key)
        )
        await self._sessions.save(session)

    async def _keep(self, reminder: Reminder) -> None:
        """Write a change through; a disk that refuses it is logged, and delivery goes on
        (a message that arrives beats a mark that says it did)."""
        try:
            await self._book.update(reminder)
        except OSError as exc:
            log.error("[Reminders] could not save #%s: %s", reminder.id, exc)
