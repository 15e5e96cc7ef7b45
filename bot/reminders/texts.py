"""Every text about reminders that a person reads, in one place, so it can be translated.

Placeholders are `str.format` fields; a translation keeps their names.
"""

from __future__ import annotations

# What arrives when a reminder is due (and what the chat's session keeps of it).
DELIVERY = "⏰ Reminder: {text}"
DELIVERY_LATE = "(It was due {when}; I could not send it then.)"
DELIVERY_NEXT = "Next time: {when}."
DELIVERY_FOOTER = "(#{id} · /reminders to see or cancel)"

# Adding, listing, cancelling.
ADDED = "Reminder #{id} set for {when}: {text}"
ADDED_REPEATING = "Reminder #{id} set, repeating ({repeat}); first time {when}: {text}"
NONE_HERE = "No reminders in this chat."
LIST_HEADER = "Reminders in this chat (time zone {zone}, now {now}):"
LIST_LINE = "#{id} · {when} · {text}"
LIST_LINE_REPEATING = "#{id} · {when}, repeating ({repeat}) · {text}"
LIST_FOOTER = (
    "Cancel one with /reminders cancel <id>; set your time zone with "
    "/reminders timezone <Area/City>."
)
CANCELLED = "Cancelled reminder #{id}: {text}"
TIMEZONE_SET = "Your time zone is now {zone} (it is {now} there). New reminders use it."
TIMEZONE_IS = "Your time zone is {zone} (it is {now} there)."
USAGE = (
    "Usage: /reminders lists this chat's reminders; /reminders cancel <id> cancels one; "
    "/reminders timezone <Area/City> sets your time zone (e.g. Europe/Berlin)."
)

# Refusals: each says what to do instead.
NOT_FOUND = "There is no reminder #{id} in this chat (/reminders lists them)."
NOT_YOURS = (
    "Reminder #{id} was set by someone else; only they or the bot's operators can cancel it."
)
UNKNOWN_ZONE = (
    "Unknown time zone {zone!r}: use an IANA name such as Europe/Berlin or America/New_York."
)
NO_TEXT = "Say what to remind about (the text is empty)."
TEXT_TOO_LONG = "The reminder's text is too long ({length} characters; at most {limit})."
NO_TIME = "Say when: a local date and time ('2026-05-04 09:00') or in_minutes."
BAD_TIME = (
    "{value!r} is not a date and time I can read: write it as YYYY-MM-DD HH:MM, in the "
    "user's time zone ({zone})."
)
IN_THE_PAST = "That time ({when}) has already passed; it is now {now}."
TOO_MANY = "You have {count} reminders, the most one person may keep ({limit}); cancel one first."
BAD_REPEAT = (
    "Could not read the repetition {repeat!r} ({reason}). Write an RFC 5545 RRULE such as "
    "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0."
)
REPEAT_NEVER = "The repetition {repeat!r} never happens after {when} (or too rarely to schedule)."
REPEAT_TOO_OFTEN = "That repeats too often: at most once every {minutes:g} minutes."
REPEAT_TOO_RARE = "That repeats too rarely to schedule (more than {years} years apart)."
REPEAT_UNCHECKED = "I could not check the repetition just now ({reason}); please try again."
NOT_SAVED = "I could not save the reminder ({reason}); nothing was set."
