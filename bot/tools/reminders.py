"""The `reminders` tool: the model sets, lists and cancels reminders for the chat it is in,
and sets the user's time zone. A reminder made here is delivered only to this chat (and
forum topic); only allowed users reach a turn, so strangers cannot make one.

What it returns is for the model and in English, whatever the user speaks (the model answers
them in their language): the same words every turn, and beside `YYYY-MM-DD HH:MM` the format
it is asked to write. The reminder itself records the user's language and speaks it when it
arrives."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bot.i18n import FALLBACK, current_language, speaking
from bot.i18n.catalogue import reminders as say
from bot.reminders import ReminderDesk, ReminderRefused, Requester
from bot.tools.registry import ToolContext

MAX_ARGUMENT_CHARS = 4000
"""Bounds what the model may send; `reminders.maxTextChars` is the limit people hear of."""
GUEST_REFUSAL = (
    "Error: no reminder can be set here. I am a guest in this chat (summoned by a mention, "
    "not a member), so I can answer only the message that summoned me and can never post "
    "here later. The user can set it in their private chat with me."
)
"""For the model, which tells the user in their words; nothing is set."""


class RemindersArguments(BaseModel):
    action: Literal["add", "list", "cancel", "set_timezone"]
    text: str = Field(
        "", max_length=MAX_ARGUMENT_CHARS, description="add: what to remind the user of."
    )
    at: str = Field(
        "",
        max_length=64,
        description=(
            "add: when, as local date and time in the user's time zone, YYYY-MM-DD HH:MM "
            "(list shows the user's zone and current time). A repeating one: its first time."
        ),
    )
    in_minutes: float | None = Field(
        None, ge=0, le=60 * 24 * 366 * 5, description="add: instead of `at`, minutes from now."
    )
    repeat: str = Field(
        "",
        max_length=300,
        description=(
            "add: to repeat, an RFC 5545 RRULE in local time, e.g. every Monday at 8: "
            "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0. Empty: once."
        ),
    )
    reminder_id: str = Field("", max_length=32, description="cancel: the id list shows.")
    timezone: str = Field(
        "", max_length=64, description="set_timezone: an IANA name such as Europe/Berlin."
    )


class RemindersTool:
    """Scoped to the turn's chat: `list` and `cancel` see only reminders set in it."""

    name = "reminders"
    description = (
        "Reminders delivered to this chat at a time, once or repeating, even while you are "
        "offline. add: set one (text, and at or in_minutes; repeat for a repeating one). "
        "list: this chat's reminders with ids, and the user's time zone and current time "
        "(call it first when you do not know today's date). cancel: by id. To snooze one that "
        "arrived, add it again for later. set_timezone: the user's IANA time zone, when they "
        "tell you where they are."
    )
    arguments = RemindersArguments

    def __init__(self, desk: ReminderDesk) -> None:
        self._desk = desk

    async def run(self, args: RemindersArguments, context: ToolContext) -> str:
        if context.address is None:
            return "Error: reminders need a chat to deliver to; this turn has none."
        if context.guest and args.action == "add":
            return GUEST_REFUSAL
        who = Requester(
            context.address,
            context.user_id,
            context.memory_scope.is_group,
            context.operator,
            language=current_language(),  # the user's, kept with a reminder set now
        )
        with speaking(FALLBACK):
            try:
                return await self._act(args, who)
            except ReminderRefused as exc:
                return f"Error: {exc}"

    async def _act(self, args: RemindersArguments, who: Requester) -> str:
        if args.action == "add":
            reminder = await self._desk.add(who, args.text, args.at, args.in_minutes, args.repeat)
            return self._desk.confirmation(reminder)
        if args.action == "cancel":
            reminder = await self._desk.cancel(who, args.reminder_id)
            return say.reminder_cancelled(reminder.id, reminder.text)
        if args.action == "set_timezone":
            zone = await self._desk.set_zone(who.user_id, args.timezone)
            now = await self._desk.now_for(who.user_id)
            return say.timezone_set(zone.key, now)
        return await self._desk.listing(who)
