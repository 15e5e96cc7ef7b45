"""Reminders with a hand-moved clock: times resolved in the user's zone, repetition, limits,
delivery through the chat's lane into its session, and what a restart finds on disk."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.chat_locks import ChatLanes
from bot.config.model import RemindersConfig
from bot.conversation import ChatAddress, ChatMessage
from bot.isolated import IsolatedScript
from bot.reminders import ReminderBook, ReminderDesk, ReminderRefused, Requester, rule_check
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.times import parse_rule, re_anchored
from bot.storage.sessions import JsonSessionStore
from tests.fakes.channel import RecordingChannel
from tests.fakes.waiting import wait_until

ALICE_CHAT = ChatAddress("test", "alice")
TOPIC = ChatAddress("test", "-100500", "7")
ALICE = Requester(ALICE_CHAT, "alice")
WEEKLY = "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0"


class Lease:
    """A delivery lease the test hands over and takes back (PostgreSQL's advisory lock)."""

    check_seconds = 60.0

    def __init__(self) -> None:
        self.holding = False

    async def held(self) -> bool:
        return self.holding

    async def release(self) -> None:
        self.holding = False


SHORT_CHECK_SECONDS = 0.5


class Parts:
    """A book, a desk and a scheduler over files in one folder, as the app wires them."""

    def __init__(
        self, folder, clock, config: RemindersConfig | None = None, lease: Lease | None = None
    ) -> None:
        self.folder = folder
        self.clock = clock
        self.config = config or RemindersConfig()
        self.book = ReminderBook(folder / "reminders" / "reminders.json")
        self.sessions = JsonSessionStore(folder / "sessions")
        self.lanes = ChatLanes()
        self.channel = RecordingChannel()
        self.scheduler = ReminderScheduler(self.book, self.sessions, self.lanes, clock, lease=lease)
        self.scheduler.deliver_through(self.channel)
        self.desk = ReminderDesk(
            self.book, lambda: self.config, clock, on_change=self.scheduler.wake
        )

    def restarted(self) -> Parts:
        """The same files read by a new process."""
        return Parts(self.folder, self.clock, self.config)

    async def session_texts(self, address: ChatAddress) -> list[str]:
        session = await JsonSessionStore(self.folder / "sessions").load(address.session_key)
        return [m.content or "" for m in session.messages]


@pytest.fixture
def parts(tmp_path, clock) -> Parts:
    return Parts(tmp_path, clock)


def on_disk(parts: Parts) -> dict:
    return json.loads((parts.folder / "reminders" / "reminders.json").read_text())


async def test_a_local_time_is_resolved_in_the_users_zone_and_saved_as_utc(parts):
    await parts.desk.set_zone("alice", "Europe/Berlin")
    reminder = await parts.desk.add(ALICE, "call Olga", at="2026-03-02 09:00")
    assert reminder.next_at == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    saved = on_disk(parts)
    assert saved["reminders"][0]["next_at"] == "2026-03-02T08:00:00Z"
    assert saved["timezones"] == {"alice": "Europe/Berlin"}
    assert "Mon 02 Mar 2026 09:00 (Europe/Berlin)" in parts.desk.confirmation(reminder)


async def test_users_without_a_zone_get_the_configured_default(tmp_path, clock):
    parts = Parts(tmp_path, clock, RemindersConfig(default_timezone="America/New_York"))
    reminder = await parts.desk.add(ALICE, "call Olga", at="2026-03-02 09:00")
    assert reminder.next_at == datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    offset = await parts.desk.add(ALICE, "standup", at="2026-03-02T09:00:00+01:00")
    assert offset.next_at == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # an explicit offset wins


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"text": "  ", "in_minutes": 5}, "text is empty"),
        ({"text": "x" * 501, "in_minutes": 5}, "too long"),
        ({"text": "call"}, "Say when"),
        ({"text": "call", "at": "tomorrow-ish"}, "YYYY-MM-DD HH:MM"),
        ({"text": "call", "at": "2026-03-01 11:00"}, "already passed"),
        ({"text": "stretch", "repeat": "FREQ=MINUTELY;INTERVAL=5"}, "too often"),
        ({"text": "never", "repeat": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, "never happens"),
        ({"text": "odd", "repeat": "FREQ=FORTNIGHTLY"}, "RRULE"),
        ({"text": "odd", "repeat": "FREQ=DAILY\nDTSTART:20200101T000000"}, "RRULE"),
    ],
)
async def test_bad_requests_are_refused_with_a_reason_and_nothing_is_set(parts, arguments, says):
    # A rule that never happens is searched until the check is killed: half a second here
    # (the bot gives it 2 s), so the fast loop does not wait for the whole limit.
    if says == "never happens":
        parts.desk = ReminderDesk(
            parts.book,
            lambda: parts.config,
            parts.clock,
            rule_checker=IsolatedScript(
                Path(rule_check.__file__), SHORT_CHECK_SECONDS, standard_library_only=False
            ),
        )
    with pytest.raises(ReminderRefused, match=says):
        await parts.desk.add(ALICE, **arguments)
    assert (await parts.book.all()) == []


async def test_an_unknown_time_zone_is_refused(parts):
    with pytest.raises(ReminderRefused, match="Unknown time zone 'Mars/Olympus'"):
        await parts.desk.set_zone("alice", "Mars/Olympus")


async def test_one_person_keeps_at_most_the_configured_number(tmp_path, clock):
    parts = Parts(tmp_path, clock, RemindersConfig(max_per_user=2))
    await parts.desk.add(ALICE, "one", in_minutes=10)
    await parts.desk.add(ALICE, "two", in_minutes=20)
    with pytest.raises(ReminderRefused, match="most one person may keep \\(2\\)"):
        await parts.desk.add(ALICE, "three", in_minutes=30)
    await parts.desk.add(Requester(ALICE_CHAT, "bob"), "bob's own", in_minutes=30)


async def test_a_due_reminder_goes_to_its_topic_and_into_its_session_without_an_llm(parts):
    topic = Requester(TOPIC, "alice", in_group=True)
    reminder = await parts.desk.add(topic, "call Olga", in_minutes=30)
    parts.clock.advance(29 * 60)
    await parts.scheduler.fire_due()
    assert parts.channel.sent == []
    parts.clock.advance(60)
    await parts.scheduler.fire_due()
    ((address, text),) = parts.channel.sent
    assert address == TOPIC and address.thread_id == "7"
    assert text.startswith("⏰ Reminder: call Olga") and f"#{reminder.id}" in text
    assert await parts.session_texts(TOPIC) == [text]
    assert (await parts.book.all()) == []  # delivered once, then gone
    await parts.scheduler.fire_due()
    assert len(parts.channel.sent) == 1


async def test_every_monday_at_8_follows_the_local_clock_across_daylight_saving(parts):
    await parts.desk.set_zone("alice", "Europe/Berlin")
    reminder = await parts.desk.add(ALICE, "weekly plan", repeat=WEEKLY)
    assert reminder.next_at == datetime(2026, 3, 2, 7, 0, tzinfo=UTC)  # CET: UTC+1
    for _ in range(4):
        parts.clock.now = (await parts.book.all())[0].next_at
        await parts.scheduler.fire_due()
    assert len(parts.channel.sent) == 4
    # 29 March: Berlin moves to CEST (UTC+2); 8:00 local is now 06:00 UTC.
    assert (await parts.book.all())[0].next_at == datetime(2026, 3, 30, 6, 0, tzinfo=UTC)
    assert "Next time: Mon 30 Mar 2026 08:00." in parts.channel.sent[-1][1]


async def test_after_a_long_outage_a_repeating_reminder_fires_once_not_once_per_miss(parts):
    await parts.desk.add(ALICE, "weekly plan", repeat=WEEKLY)
    parts.clock.advance(timedelta(weeks=5).total_seconds())  # now Sun 5 Apr, 12:00
    await parts.scheduler.fire_due()
    ((_, text),) = parts.channel.sent
    assert "It was due Mon 02 Mar 2026 08:00" in text
    assert (await parts.book.all())[0].next_at == datetime(2026, 4, 6, 8, 0, tzinfo=UTC)
    await parts.scheduler.fire_due()
    assert len(parts.channel.sent) == 1


async def test_a_reminder_due_while_the_bot_was_down_fires_once_after_the_restart(parts):
    await parts.desk.add(ALICE, "call Olga", in_minutes=30)
    parts.clock.advance(3 * 3600)  # the bot was down at the due time
    restarted = parts.restarted()
    await restarted.scheduler.fire_due()
    ((_, text),) = restarted.channel.sent
    assert "call Olga" in text and "It was due" in text
    again = restarted.restarted()
    await again.scheduler.start()
    await again.scheduler.fire_due()
    await again.scheduler.stop()
    assert again.channel.sent == []


async def test_a_delivery_cut_short_by_a_kill_is_sent_again_and_recorded_once(parts):
    """Killed after the `firing` mark and before the receipt: the next start sends it again
    (the bot cannot know whether it arrived); its session still has it once."""
    reminder = await parts.desk.add(ALICE, "call Olga", in_minutes=1)
    occurrence = reminder.next_at
    await parts.book.update(reminder.model_copy(update={"firing": occurrence}))
    parts.clock.advance(120)
    restarted = parts.restarted()
    await restarted.scheduler.start()
    await restarted.scheduler.fire_due()
    await restarted.scheduler.stop()
    assert len(restarted.channel.sent) == 1
    assert len(await restarted.session_texts(ALICE_CHAT)) == 1
    assert (await restarted.book.all()) == []


async def test_a_delivery_whose_session_write_was_cut_short_is_recorded_not_resent(parts):
    reminder = await parts.desk.add(ALICE, "call Olga", in_minutes=1)
    receipt = {"next_at": None, "unrecorded": reminder.next_at, "unrecorded_text": "⏰ sent"}
    await parts.book.update(reminder.model_copy(update=receipt))
    parts.clock.advance(120)
    restarted = parts.restarted()
    await restarted.scheduler.start()
    await restarted.scheduler.fire_due()
    await restarted.scheduler.stop()
    assert restarted.channel.sent == []
    assert await restarted.session_texts(ALICE_CHAT) == ["⏰ sent"]
    assert (await restarted.book.all()) == []


async def test_a_failed_delivery_is_tried_again_after_a_rest(parts):
    await parts.desk.add(ALICE, "call Olga", in_minutes=1)
    parts.channel.fail_sends = 1
    parts.clock.advance(60)
    await parts.scheduler.fire_due()
    assert parts.channel.sent == []
    retry_at = (await parts.book.all())[0].retry_at
    assert retry_at is not None and retry_at > parts.clock.now
    await parts.scheduler.fire_due()
    assert parts.channel.sent == []
    parts.clock.now = retry_at
    await parts.scheduler.fire_due()
    assert len(parts.channel.sent) == 1


async def test_a_reminder_waits_for_the_turn_running_in_its_chat(parts):
    await parts.desk.add(ALICE, "call Olga", in_minutes=1)
    parts.clock.advance(60)
    key = ALICE_CHAT.session_key
    async with parts.lanes.turn(key):
        firing = asyncio.create_task(parts.scheduler.fire_due())
        session = await parts.sessions.load(key)
        session.messages += [ChatMessage.user("hi"), ChatMessage.assistant("hello")]
        await parts.sessions.save(session)
    await firing
    texts = await parts.session_texts(ALICE_CHAT)
    assert texts[:2] == ["hi", "hello"] and texts[2].startswith("⏰ Reminder: call Olga")


async def test_the_scheduler_sleeps_until_the_next_due_time_and_wakes_when_one_is_added(parts):
    later = await parts.desk.add(ALICE, "later", in_minutes=120)
    await parts.scheduler.start()
    try:
        await asyncio.wait_for(parts.scheduler.asleep.wait(), 5)
        assert parts.scheduler.sleeping_until == later.next_at
        sooner = await parts.desk.add(ALICE, "sooner", in_minutes=10)  # wakes it
        await asyncio.wait_for(parts.scheduler.asleep.wait(), 5)
        assert parts.scheduler.sleeping_until == sooner.next_at
        parts.clock.advance(10 * 60)
        parts.scheduler.wake()
        await wait_until(lambda: len(parts.channel.sent) == 1)
        await wait_until(lambda: parts.scheduler.sleeping_until == later.next_at)
        await parts.desk.cancel(ALICE, later.id)
        await wait_until(lambda: parts.scheduler.sleeping_until is None)
    finally:
        await parts.scheduler.stop()


async def test_a_chat_sees_and_cancels_only_its_own_reminders(parts):
    private = await parts.desk.add(ALICE, "private thing", in_minutes=10)
    group = Requester(TOPIC, "alice", in_group=True)
    in_group = await parts.desk.add(group, "group thing", in_minutes=10)
    assert "private thing" not in (await parts.desk.listing(group))
    assert "group thing" in (await parts.desk.listing(group))
    with pytest.raises(ReminderRefused, match="no reminder"):
        await parts.desk.cancel(group, private.id)
    bob = Requester(TOPIC, "bob", in_group=True)
    with pytest.raises(ReminderRefused, match="set by someone else"):
        await parts.desk.cancel(bob, in_group.id)
    operator = Requester(TOPIC, "carol", in_group=True, operator=True)
    assert (await parts.desk.cancel(operator, in_group.id)).id == in_group.id


async def test_forget_all_removes_a_users_reminders_and_time_zone(parts):
    await parts.desk.set_zone("alice", "Europe/Berlin")
    await parts.desk.add(ALICE, "call Olga", in_minutes=10)
    await parts.desk.add(Requester(ALICE_CHAT, "bob"), "bob's", in_minutes=10)
    assert await parts.book.count_for("alice") == 2
    assert await parts.book.forget_user("alice") == 2
    assert [r.user_id for r in (await parts.restarted().book.all())] == ["bob"]
    assert await parts.restarted().book.timezone_of("alice") is None


async def test_a_damaged_file_is_moved_aside_and_the_bot_starts_with_none(tmp_path):
    path = tmp_path / "reminders" / "reminders.json"
    path.parent.mkdir()
    path.write_text('{"reminders": [{"id": ')
    assert (await ReminderBook(path).all()) == []
    assert len(list(path.parent.glob("reminders.corrupt-*.json"))) == 1


async def test_the_reminders_command_lists_cancels_and_sets_the_time_zone(parts):
    from bot.commands import CommandRegistry, parse_command
    from bot.commands.reminders import ReminderCommands
    from bot.conversation import IncomingMessage

    registry = CommandRegistry()
    ReminderCommands(registry, parts.desk).register()

    async def run(text: str) -> str:
        call = parse_command(IncomingMessage(ALICE_CHAT, "alice", text))
        assert call is not None
        return await registry.run(call)

    assert "No reminders in this chat." in await run("/reminders")
    assert await run("/reminders timezone Asia/Tokyo") == (
        "Your time zone is now Asia/Tokyo (it is Sun 01 Mar 2026 21:00 there). "
        "New reminders use it."
    )
    reminder = await parts.desk.add(ALICE, "call Olga", at="2026-03-02 09:00")
    listing = await run("/reminders")
    assert "time zone Asia/Tokyo" in listing
    assert f"#{reminder.id} · Mon 02 Mar 2026 09:00 · call Olga" in listing
    assert await run("/reminders cancel nope") == (
        "There is no reminder #nope in this chat (/reminders lists them)."
    )
    assert await run(f"/reminders cancel #{reminder.id}") == (
        f"Cancelled reminder #{reminder.id}: call Olga"
    )
    assert (await parts.book.all()) == []
    assert (await run("/reminders frobnicate")).startswith("Usage: /reminders")


async def test_the_tool_sets_a_reminder_for_the_turns_chat_and_reports_errors(parts):
    from bot.config.model import ToolsConfig
    from bot.conversation import MemoryScope, ToolCall
    from bot.tools import ToolContext, ToolRegistry
    from bot.tools.reminders import RemindersTool

    registry = ToolRegistry([RemindersTool(parts.desk)])
    context = ToolContext("alice", TOPIC.session_key, MemoryScope("g", "alice"), address=TOPIC)

    async def call(**arguments) -> str:
        tool_call = ToolCall(id="1", name="reminders", arguments=json.dumps(arguments))
        return await registry.execute(tool_call, context, ToolsConfig(), 10, 8000)

    added = await call(action="add", text="call Olga", at="2026-03-02 09:00")
    assert added.startswith("Reminder #") and "Mon 02 Mar 2026 09:00 (UTC)" in added
    (reminder,) = await parts.book.all()
    assert reminder.address == TOPIC
    assert "call Olga" in await call(action="list")
    assert (await call(action="add", text="x", at="yesterday")).startswith("Error: 'yesterday'")
    assert (await call(action="cancel", reminder_id=reminder.id)).startswith("Cancelled")


async def test_the_tool_sets_nothing_where_the_bot_is_a_guest_and_says_why(parts):
    from bot.config.model import ToolsConfig
    from bot.conversation import MemoryScope, ToolCall
    from bot.tools import ToolContext, ToolRegistry
    from bot.tools.reminders import RemindersTool

    registry = ToolRegistry([RemindersTool(parts.desk)])
    guest_chat = ChatAddress("telegram-guest", "-100777")
    context = ToolContext(
        "alice",
        guest_chat.session_key,
        MemoryScope("group:telegram-guest:-100777", "alice"),
        address=guest_chat,
        guest=True,
    )
    arguments = {"action": "add", "text": "call Olga", "in_minutes": 5}
    tool_call = ToolCall(id="1", name="reminders", arguments=json.dumps(arguments))
    refused = await registry.execute(tool_call, context, ToolsConfig(), 10, 8000)
    assert refused.startswith("Error: no reminder can be set here. I am a guest in this chat")
    assert "private chat" in refused, "says where it can be set instead"
    assert await parts.book.all() == []


class _SlowAnswer:
    """A pipeline system that answers only once `go` is set, so a turn stays in its lane."""

    name = "slow answer"
    order = 60

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.go = asyncio.Event()

    def should_process(self, ctx) -> bool:
        return True

    async def process(self, ctx) -> None:
        self.started.set()
        await self.go.wait()
        ctx.final_text = "the answer"
        ctx.turn_messages = [ChatMessage.assistant("the answer")]
        await ctx.channel.send(ctx.message.address, "the answer")
        ctx.reply_sent = True


async def test_a_reminder_due_during_a_turn_is_delivered_after_it_in_the_same_lanes(parts):
    """The runner and the scheduler share the app's lanes (an empty `ChatLanes` once made the
    runner build its own, and a reminder then landed in the middle of a turn)."""
    from bot.commands import CommandRegistry
    from bot.config import RuntimeConfigStore
    from bot.conversation import IncomingMessage
    from bot.pipeline import Pipeline
    from bot.turns import TurnRunner

    slow = _SlowAnswer()
    config = RuntimeConfigStore(parts.folder / "missing.json")
    runner = TurnRunner(
        Pipeline([slow]), parts.sessions, config, CommandRegistry(), lanes=parts.lanes
    )
    assert runner.lanes is parts.lanes, "an empty ChatLanes is kept, not replaced"
    await parts.desk.add(ALICE, "call Olga", in_minutes=1)
    turn = asyncio.create_task(
        runner.handle(IncomingMessage(ALICE_CHAT, "alice", "hi"), parts.channel)
    )
    await slow.started.wait()
    parts.clock.advance(60)
    firing = asyncio.create_task(parts.scheduler.fire_due())
    slow.go.set()
    await asyncio.gather(turn, firing)
    said = [text.split("\n")[0] for _, text in parts.channel.sent]
    assert said == ["the answer", "⏰ Reminder: call Olga"]
    assert [t.split("\n")[0] for t in await parts.session_texts(ALICE_CHAT)] == [
        "hi", "the answer", "⏰ Reminder: call Olga",
    ]  # fmt: skip


async def test_only_the_lease_holder_delivers_and_a_new_holder_resends_a_cut_delivery(
    tmp_path, clock
):
    lease = Lease()
    parts = Parts(tmp_path, clock, lease=lease)
    cut = await parts.desk.add(ALICE, "call Olga", in_minutes=10)
    # the holder that died had marked it `firing`; this process does not hold the lease yet
    await parts.book.update(cut.model_copy(update={"firing": cut.next_at}))
    clock.advance(11 * 60)
    await parts.scheduler.fire_due()
    assert parts.channel.sent == [] and not parts.scheduler.leading
    lease.holding = True  # the holder's connection closed: this process takes over
    await parts.scheduler.fire_due()
    assert parts.scheduler.leading
    (sent,) = parts.channel.sent
    assert sent[1].startswith("⏰ Reminder: call Olga")
    assert (await parts.book.all()) == []
    lease.holding = False  # lost again: a reminder due now waits for whoever holds it
    await parts.desk.add(ALICE, "stretch", in_minutes=1)
    clock.advance(2 * 60)
    await parts.scheduler.fire_due()
    assert len(parts.channel.sent) == 1 and not parts.scheduler.leading
    assert [r.text for r in await parts.book.soonest(5)] == ["stretch"]


REANCHOR_RULES = [
    "FREQ=DAILY",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE",
    "FREQ=WEEKLY;WKST=SU;INTERVAL=2;BYDAY=SU,SA",
    "FREQ=MONTHLY;BYMONTHDAY=31",
    "FREQ=MONTHLY;INTERVAL=2;BYDAY=2TU",
    "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR",
    "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=-1",
    "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
    "FREQ=HOURLY;INTERVAL=7;BYMINUTE=15,45",
    "FREQ=MINUTELY;INTERVAL=90",
    "FREQ=DAILY;INTERVAL=10;BYHOUR=9,17",
]


@pytest.mark.parametrize("rule", REANCHOR_RULES)
def test_a_rule_re_anchored_at_one_of_its_times_gives_the_same_times_after_it(rule):
    anchor = datetime(2001, 3, 31, 9, 30)
    times = list(itertools.islice(parse_rule(rule, anchor), 200))
    for k in (1, 17, 150):
        again = parse_rule(rule, re_anchored(rule, anchor, times[k]))
        assert list(itertools.islice(again, 40)) == times[k : k + 40]


def test_a_rule_with_a_count_keeps_its_anchor():
    anchor = datetime(2001, 3, 31, 9, 30)
    assert re_anchored("FREQ=DAILY;COUNT=10", anchor, datetime(2001, 4, 5, 9, 30)) == anchor


async def test_a_repeating_reminder_started_long_ago_walks_from_its_next_time(parts):
    """Each next time is searched from the anchor: one left years back cost a walk through
    every time since at each delivery (0.55 s of the event loop's CPU in the trust review)."""
    daily = "FREQ=DAILY;BYHOUR=18;BYMINUTE=30"
    reminder = await parts.desk.add(ALICE, "stretch", at="1996-03-01 18:30", repeat=daily)
    assert reminder.next_at == datetime(2026, 3, 1, 18, 30, tzinfo=UTC)
    assert reminder.anchor == datetime(2026, 3, 1, 18, 30), "anchored at its first time"
    parts.clock.now = reminder.next_at
    await parts.scheduler.fire_due()
    (kept,) = await parts.book.all()
    assert kept.next_at == datetime(2026, 3, 2, 18, 30, tzinfo=UTC)
    assert kept.anchor == datetime(2026, 3, 2, 18, 30), "moved on to the next time"


async def test_a_reminder_kept_with_an_old_anchor_moves_it_on_at_its_next_delivery(parts):
    reminder = await parts.desk.add(ALICE, "stretch", repeat="FREQ=DAILY;BYHOUR=18;BYMINUTE=0")
    old = reminder.model_copy(update={"anchor": datetime(1990, 1, 1, 18, 0)})
    await parts.book.update(old)
    parts.clock.now = reminder.next_at
    await parts.scheduler.fire_due()
    (kept,) = await parts.book.all()
    assert kept.next_at == datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    assert kept.anchor == datetime(2026, 3, 2, 18, 0)
