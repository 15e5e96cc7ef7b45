"""A reminder as it is kept on disk: where it goes, what it says, when it is due next."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from bot.conversation import ChatAddress
from bot.i18n import Language


class ReminderRefused(Exception):
    """A reminder that cannot be set or cancelled; the message says why, for people."""


class TooManyReminders(Exception):
    """The setter already has their limit of reminders still to come."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} reminders")
        self.count = count


class Reminder(BaseModel):
    """One reminder of one chat. Times are UTC; `zone` and `anchor` keep the wall clock a
    repeating one follows ("every Monday at 8" stays at 8 across daylight saving)."""

    id: str
    channel: str
    chat_id: str
    thread_id: str | None = None
    """The forum topic it was set in (Telegram's message_thread_id): it is delivered there."""
    user_id: str
    """Who set it: whose limit it counts against, who may cancel it, whose `/forget all`
    removes it."""
    in_group: bool = False
    text: str
    zone: str
    """The IANA time zone its time was given in (the setter's, when they set it)."""
    repeat: str = ""
    """An RFC 5545 RRULE (`FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0`), or empty: once."""
    anchor: datetime | None = None
    """A repeating one's start as local wall time, without zone (the rule's DTSTART)."""
    next_at: datetime | None = None
    """When it is due next (UTC); None once it has no time left (delivered, then removed)."""
    firing: datetime | None = None
    """The occurrence being delivered: written before the message is sent, cleared by the
    receipt after. Still set at a start: the bot died mid-delivery, so it is sent again."""
    unrecorded: datetime | None = None
    """An occurrence delivered but not yet in the chat's session: recorded at the next start."""
    unrecorded_text: str = ""
    """What that delivery said, word for word."""
    failures: int = 0
    """Failed deliveries of the current occurrence; it is tried again after a rest."""
    retry_at: datetime | None = None
    created_at: datetime
    delivered: int = Field(0, ge=0, description="Occurrences delivered so far.")
    language: Language | None = None
    """The language its setter was spoken to in when they set it: it is delivered in this
    one unless they have chosen another with `/language` by then. None (a file from before
    languages): English, or their choice."""

    @property
    def address(self) -> ChatAddress:
        return ChatAddress(self.channel, self.chat_id, self.thread_id)

    @property
    def session_key(self) -> str:
        return self.address.session_key

    @property
    def due_at(self) -> datetime | None:
        """When the scheduler should act on it next: a retry, a delivery to finish, or the
        next occurrence."""
        if self.retry_at is not None:
            return self.retry_at
        return self.firing or self.next_at

    def occurrence_key(self, occurrence: datetime) -> str:
        """The id of one delivery in the chat's session, so it is never recorded twice."""
        return f"reminder:{self.id}:{occurrence.isoformat()}"
