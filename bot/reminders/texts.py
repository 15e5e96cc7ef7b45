"""What only the model reads of reminders: the `reminders` tool's results and the refusals
of a reminder being set, in English (the model tells the user in their language, and
English keeps the format it must write, `YYYY-MM-DD HH:MM`, beside the words that ask for it).

What a person reads (the delivered reminder, `/reminders` and its refusals) is in the
catalogue, `bot/i18n/catalogue/reminders.py`, in English and Russian.
Placeholders are `str.format` fields.
"""

from __future__ import annotations

# The tool's answer to `add`.
ADDED = "Reminder #{id} set for {when}: {text}"
ADDED_REPEATING = "Reminder #{id} set, repeating {repeat}; first time {when}: {text}"

# Refusals of `add` (only the tool adds): each says what to do instead.
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
