"""Setting, listing and cancelling reminders: what the `reminders` tool and `/reminders` share.

Every refusal is a `ReminderRefused` whose message tells a person (or the model) what to do
instead; nothing is half-set. A repeating rule is first expanded in a child process
(`rule_check.py`), so a rule that never happens cannot hold up the bot.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config.model import RemindersConfig
from bot.conversation import ChatAddress
from bot.i18n import Language, current_language, speaking
from bot.i18n.catalogue import reminders as say
from bot.isolated import IsolatedFailure, IsolatedScript
from bot.reminders import rule_check, texts
from bot.reminders.book import ReminderStore
from bot.reminders.model import Reminder, ReminderRefused, TooManyReminders
from bot.reminders.spoken import spoken_rule
from bot.reminders.times import (
    TimeRefused,
    clean_rule,
    gaps,
    local_wall_time,
    re_anchored,
    resolve_local,
    shown,
    utc_of,
    zone_named,
)

log = logging.getLogger(__name__)

RULE_CHECK_SECONDS = 2.0
"""A sound rule's first times take milliseconds; one still searching after this is refused as
one that never happens (or too rarely to matter)."""
CHECKED_OCCURRENCES = 6
MAX_GAP_YEARS = 5
"""A rule whose times are further apart than this is refused: python-dateutil walks day by day
between occurrences, so the gap bounds what each next time costs on the event loop."""


@dataclass(frozen=True)
class Requester:
    """Who asks, and where: a reminder belongs to the chat (and topic) it was set in."""

    address: ChatAddress
    user_id: str
    in_group: bool = False
    operator: bool = False
    """Runs the bot: may cancel anyone's reminder in a group."""
    language: Language = field(default_factory=current_language)
    """The language they are spoken to in (the message's): their reminders are delivered in
    it unless they choose another with `/language` by then."""


class ReminderDesk:
    """Adds, lists and cancels reminders in the book, and tells the scheduler (`on_change`)."""

    def __init__(
        self,
        book: ReminderStore,
        config: Callable[[], RemindersConfig],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_change: Callable[[], None] = lambda: None,
        rule_checker: IsolatedScript | None = None,
    ) -> None:
        self._book = book
        self._config = config
        self._clock = clock
        self.on_change = on_change
        self._checker = rule_checker or IsolatedScript(
            Path(rule_check.__file__), RULE_CHECK_SECONDS, standard_library_only=False
        )

    async def zone_of(self, user_id: str) -> ZoneInfo:
        """The user's own time zone, else the operator's default."""
        name = await self._book.timezone_of(user_id) or self._config().default_timezone
        try:
            return zone_named(name)
        except TimeRefused:  # a zone tzdata no longer knows: the default, which was checked
            return zone_named(self._config().default_timezone)

    async def set_zone(self, user_id: str, name: str) -> ZoneInfo:
        zone = zone_named(name)
        await self._saving(self._book.set_timezone(user_id, zone.key))
        return zone

    async def now_for(self, user_id: str) -> str:
        return shown(self._clock(), await self.zone_of(user_id))

    async def in_chat(self, address: ChatAddress) -> list[Reminder]:
        return await self._book.in_chat(address.session_key)

    async def add(
        self,
        who: Requester,
        text: str,
        at: str = "",
        in_minutes: float | None = None,
        repeat: str = "",
    ) -> Reminder:
        config = self._config()
        text = _checked_text(text, config)
        zone, now = await self.zone_of(who.user_id), self._clock()
        start = _start_time(at, in_minutes, zone, now, bool(repeat.strip()))
        reminder = Reminder(
            id=await self._book.new_id(),
            channel=who.address.channel,
            chat_id=who.address.chat_id,
            thread_id=who.address.thread_id,
            user_id=who.user_id,
            in_group=who.in_group,
            text=text,
            zone=zone.key,
            next_at=start,
            created_at=now,
            language=who.language,
        )
        if repeat.strip():
            rule = clean_rule(repeat)
            anchor = local_wall_time(start, zone)
            after = local_wall_time(max(start, now), zone)
            first = await self._first_time(rule, anchor, after, config)
            anchor = re_anchored(rule, anchor, first)
            update = {"repeat": rule, "anchor": anchor, "next_at": utc_of(first, zone)}
            reminder = reminder.model_copy(update=update)
        elif start <= now:
            raise ReminderRefused(
                texts.IN_THE_PAST.format(when=shown(start, zone), now=shown(now, zone))
            )
        try:  # the book counts and adds in one step: two requests at once stay in the limit
            await self._saving(self._book.add(reminder, config.max_per_user))
        except TooManyReminders as exc:
            limit = config.max_per_user
            raise ReminderRefused(texts.TOO_MANY.format(count=exc.count, limit=limit)) from None
        log.info("[Reminders] #%s set in %s", reminder.id, reminder.session_key)
        self.on_change()
        return reminder

    async def cancel(self, who: Requester, reminder_id: str) -> Reminder:
        reminder_id = reminder_id.strip().lstrip("#").lower()
        found = await self._book.get(reminder_id)
        if found is None or found.session_key != who.address.session_key or not found.next_at:
            raise ReminderRefused(say.reminder_not_found(reminder_id or "?"))
        if found.user_id != who.user_id and not who.operator:
            raise ReminderRefused(say.reminder_not_yours(reminder_id))
        await self._saving(self._book.remove(reminder_id))
        log.info("[Reminders] #%s cancelled", reminder_id)
        self.on_change()
        return found

    async def listing(self, who: Requester) -> str:
        """The chat's reminders, with the asker's time zone and current time (which the model
        needs to turn "tomorrow at 9" into a date)."""
        zone = await self.zone_of(who.user_id)
        header = say.reminders_header(zone.key, shown(self._clock(), zone))
        lines = [self.describe(r) for r in await self.in_chat(who.address)]
        return "\n".join([header, *(lines or [say.reminders_none()]), say.reminders_footer()])

    def describe(self, reminder: Reminder) -> str:
        """One line: id, next time in the reminder's zone, repetition, text."""
        zone = zone_named(reminder.zone)
        when = shown(reminder.next_at, zone) if reminder.next_at else "-"
        if reminder.repeat:
            repeat = spoken_rule(reminder.repeat, reminder.anchor, reminder.zone)
            return say.reminder_line_repeating(reminder.id, when, repeat, reminder.text)
        return f"#{reminder.id} · {when} · {reminder.text}"  # no words: every language's

    def confirmation(self, reminder: Reminder) -> str:
        assert reminder.next_at is not None
        when = f"{shown(reminder.next_at, zone_named(reminder.zone))} ({reminder.zone})"
        template = texts.ADDED_REPEATING if reminder.repeat else texts.ADDED
        with speaking(Language.EN):  # the model reads it, in English (`texts`)
            repeat = spoken_rule(reminder.repeat, reminder.anchor, reminder.zone)
        return template.format(id=reminder.id, when=when, repeat=repeat, text=reminder.text)

    async def _first_time(
        self,
        rule: str,
        anchor: datetime,
        after: datetime,
        config: RemindersConfig,
    ) -> datetime:
        """The rule's first time at or after `after` (local, as local wall time), once its
        first few times show it happens, not too often and not too rarely."""
        request = {"rule": rule, "anchor": anchor.isoformat(), "after": after.isoformat()}
        try:
            output = await self._checker.run(json.dumps({**request, "count": CHECKED_OCCURRENCES}))
        except IsolatedFailure:
            when = after.strftime("%Y-%m-%d %H:%M")
            raise ReminderRefused(texts.REPEAT_NEVER.format(repeat=rule, when=when)) from None
        except OSError as exc:  # no child process here: better no reminder than a stalled bot
            raise ReminderRefused(texts.REPEAT_UNCHECKED.format(reason=exc)) from None
        answer = json.loads(output)
        if "error" in answer:
            raise ReminderRefused(texts.BAD_REPEAT.format(repeat=rule, reason=answer["error"]))
        found = [datetime.fromisoformat(value) for value in answer["occurrences"]]
        if not found:
            raise ReminderRefused(
                texts.REPEAT_NEVER.format(repeat=rule, when=after.strftime("%Y-%m-%d %H:%M"))
            )
        apart = gaps(found)
        if apart and min(apart) < timedelta(minutes=config.min_repeat_minutes):
            raise ReminderRefused(texts.REPEAT_TOO_OFTEN.format(minutes=config.min_repeat_minutes))
        if apart and max(apart) > timedelta(days=366 * MAX_GAP_YEARS):
            raise ReminderRefused(texts.REPEAT_TOO_RARE.format(years=MAX_GAP_YEARS))
        return found[0]

    @staticmethod
    async def _saving(change: Awaitable[object]) -> None:
        try:
            await change
        except OSError as exc:
            log.error("[Reminders] could not save: %s", exc)
            raise ReminderRefused(say.reminder_not_saved(str(exc.strerror or exc))) from None


def _checked_text(text: str, config: RemindersConfig) -> str:
    text = " ".join(text.split())
    if not text:
        raise ReminderRefused(texts.NO_TEXT)
    if len(text) > config.max_text_chars:
        limit = config.max_text_chars
        raise ReminderRefused(texts.TEXT_TOO_LONG.format(length=len(text), limit=limit))
    return text


def _start_time(
    at: str, in_minutes: float | None, zone: ZoneInfo, now: datetime, repeating: bool
) -> datetime:
    """When it is first due (UTC): `at` in the user's zone, or `in_minutes` from now; a
    repeating one without either starts now (its rule gives the times)."""
    if in_minutes is not None:
        return now + timedelta(minutes=in_minutes)
    if at.strip():
        return resolve_local(at, zone)
    if repeating:
        return now.replace(second=0, microsecond=0)
    raise TimeRefused(texts.NO_TIME)
