"""What every reminder book promises (`ReminderStore`, `bot/reminders/book.py`): reminders and
time zones kept across a restart, per chat and per user, the per-person limit even for
requests at once, the delivery marks, and `/forget all`. The JSON file and PostgreSQL alike."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.reminders.model import Reminder, TooManyReminders

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def reminder(rid: str, user: str = "ann", chat: str = "ann", minutes: int = 10) -> Reminder:
    return Reminder(
        id=rid,
        channel="telegram",
        chat_id=chat,
        user_id=user,
        text=f"text of {rid}",
        zone="Europe/Berlin",
        next_at=NOW + timedelta(minutes=minutes),
        created_at=NOW,
    )


async def test_reminders_and_zones_are_read_back_after_a_restart(new_reminder_book):
    book = await new_reminder_book()
    kept = reminder("a1")
    await book.add(kept, limit=5)
    await book.set_timezone("ann", "Europe/Berlin")
    await book.set_timezone("ann", "Asia/Tokyo")
    again = await new_reminder_book()
    assert await again.get("a1") == kept
    assert await again.all() == [kept]
    assert await again.timezone_of("ann") == "Asia/Tokyo"
    assert await again.timezone_of("bob") is None
    assert await again.get("zz") is None


async def test_a_chat_lists_only_its_own_reminders_still_to_come_soonest_first(new_reminder_book):
    book = await new_reminder_book()
    await book.add(reminder("late", minutes=30), limit=5)
    await book.add(reminder("soon", minutes=5), limit=5)
    await book.add(reminder("group", chat="-100", minutes=1), limit=5)
    delivered = reminder("done", minutes=2).model_copy(
        update={"next_at": None, "unrecorded": NOW, "unrecorded_text": "⏰"}
    )
    await book.add(reminder("done", minutes=2), limit=5)
    await book.update(delivered)  # sent, not yet in the session: kept, but not listed
    listed = await (await new_reminder_book()).in_chat("telegram:ann")
    assert [r.id for r in listed] == ["soon", "late"]
    assert [r.id for r in await book.in_chat("telegram:-100")] == ["group"]


async def test_a_person_keeps_at_most_the_limit_even_when_asking_at_once(new_reminder_book):
    book = await new_reminder_book()
    results = await asyncio.gather(
        *(book.add(reminder(f"r{n}"), limit=3) for n in range(8)), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, TooManyReminders)]
    assert len(refused) == 5 and all(r.count == 3 for r in refused)
    assert len(await (await new_reminder_book()).all()) == 3
    await book.add(reminder("bobs", user="bob"), limit=3)  # the limit is per person


async def test_the_delivery_marks_are_kept_and_what_a_stop_cut_short_is_found(new_reminder_book):
    book = await new_reminder_book()
    await book.add(reminder("plain"), limit=5)
    await book.add(reminder("fired"), limit=5)
    await book.add(reminder("sent"), limit=5)
    occurrence = NOW + timedelta(minutes=10)
    await book.update(reminder("fired").model_copy(update={"firing": occurrence}))
    receipt = {"next_at": None, "unrecorded": occurrence, "unrecorded_text": "⏰ sent"}
    assert await book.update(reminder("sent").model_copy(update=receipt))
    restarted = await new_reminder_book()
    cut_short = {r.id: r for r in await restarted.interrupted()}
    assert sorted(cut_short) == ["fired", "sent"]
    assert cut_short["fired"].firing == occurrence
    assert cut_short["sent"].unrecorded_text == "⏰ sent"
    done = cut_short["sent"].model_copy(update={"unrecorded": None, "unrecorded_text": ""})
    assert await restarted.update(done)  # recorded, and no time left: gone
    assert await restarted.get("sent") is None
    assert [r.id for r in await restarted.interrupted()] == ["fired"]


async def test_an_update_of_a_cancelled_reminder_changes_nothing(new_reminder_book):
    book = await new_reminder_book()
    await book.add(reminder("gone"), limit=5)
    removed = await book.remove("gone")
    assert removed is not None and removed.id == "gone"
    marked = reminder("gone").model_copy(update={"firing": NOW})
    assert await book.update(marked) is False  # a delivery under way does not bring it back
    assert await (await new_reminder_book()).all() == []
    assert await book.remove("gone") is None


async def test_the_soonest_come_first_by_when_the_scheduler_acts(new_reminder_book):
    book = await new_reminder_book()
    for rid, minutes in [("c", 30), ("a", 10), ("b", 20), ("d", 40)]:
        await book.add(reminder(rid, minutes=minutes), limit=10)
    retry = NOW + timedelta(minutes=50)  # a failed delivery rests: it acts at its retry
    await book.update(reminder("a", minutes=10).model_copy(update={"retry_at": retry}))
    soonest = await (await new_reminder_book()).soonest(3)
    assert [r.id for r in soonest] == ["b", "c", "d"]
    assert [r.id for r in await book.soonest(10)] == ["b", "c", "d", "a"]


async def test_forget_all_takes_one_persons_reminders_and_zone_only(new_reminder_book):
    book = await new_reminder_book()
    await book.add(reminder("a1"), limit=5)
    await book.add(reminder("a2", chat="-100"), limit=5)
    await book.add(reminder("b1", user="bob", chat="bob"), limit=5)
    await book.set_timezone("ann", "Europe/Berlin")
    await book.set_timezone("bob", "Asia/Tokyo")
    assert await book.count_for("ann") == 3
    assert await book.forget_user("ann") == 3
    assert await book.forget_user("ann") == 0
    restarted = await new_reminder_book()
    assert [r.id for r in await restarted.all()] == ["b1"]
    assert await restarted.timezone_of("ann") is None
    assert await restarted.timezone_of("bob") == "Asia/Tokyo"
    assert await restarted.count_for("bob") == 2


async def test_new_ids_are_not_taken(new_reminder_book):
    book = await new_reminder_book()
    rounds = 3
    for _ in range(rounds):
        rid = await book.new_id()
        assert await book.get(rid) is None and len(rid) == 6
        await book.add(reminder(rid), limit=10)
    assert len({r.id for r in await book.all()}) == rounds
