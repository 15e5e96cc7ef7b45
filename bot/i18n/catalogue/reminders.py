"""Reminders as people read them: the delivered message, `/reminders` and its refusals, and
times in the reader's language. What only the model reads (the `reminders` tool's results
and the refusals of a reminder being set) stays English, in `bot/reminders/texts.py`."""

from __future__ import annotations

from datetime import datetime

from bot.i18n.language import Language, current_language
from bot.i18n.phrase import Say, phrase

WEEKDAYS_RU = ("пн", "вт", "ср", "чт", "пт", "сб", "вс")
MONTHS_RU = (
    "янв",
    "фев",
    "мар",
    "апр",
    "мая",
    "июн",
    "июл",
    "авг",
    "сен",
    "окт",
    "ноя",
    "дек",
)
"""Short month names in the genitive, as a date is read ("27 ноя": of November)."""


def wall_time_shown(local: datetime) -> str:
    """A local time for the current reader: `Fri 27 Nov 2026 09:00`, `пт 27 ноя 2026 09:00`.
    Not `strftime("%a %b")` in Russian: that follows the process's locale, not the reader's."""
    if current_language() is Language.RU:
        weekday, month = WEEKDAYS_RU[local.weekday()], MONTHS_RU[local.month - 1]
        return f"{weekday} {local.day:02d} {month} {local.year} {local:%H:%M}"
    return local.strftime("%a %d %b %Y %H:%M")


# The delivered reminder (and what the chat's session keeps of it).


@phrase
def reminder_due(text: str) -> Say:
    return Say(en=f"⏰ Reminder: {text}", ru=f"⏰ Напоминание: {text}")


@phrase
def reminder_was_due(when: str) -> Say:
    return Say(
        en=f"(It was due {when}; I could not send it then.)",
        ru=f"(Его время было {when}, но тогда я не смог его отправить.)",
    )


@phrase
def reminder_next(when: str) -> Say:
    return Say(en=f"Next time: {when}.", ru=f"В следующий раз: {when}.")


@phrase
def reminder_footer(reminder_id: str) -> Say:
    return Say(
        en=f"(#{reminder_id} · /reminders to see or cancel)",
        ru=f"(#{reminder_id} · /reminders, чтобы посмотреть или отменить)",
    )


# `/reminders`: the list (the model reads it too, in English), cancelling, the time zone.


@phrase
def reminders_header(zone: str, now: str) -> Say:
    return Say(
        en=f"Reminders in this chat (time zone {zone}, now {now}):",
        ru=f"Напоминания в этом чате (часовой пояс {zone}, сейчас {now}):",
    )


@phrase
def reminders_none() -> Say:
    return Say(en="No reminders in this chat.", ru="В этом чате нет напоминаний.")


@phrase
def reminder_line_repeating(reminder_id: str, when: str, repeat: str, text: str) -> Say:
    return Say(
        en=f"#{reminder_id} · {when}, repeats {repeat} · {text}",
        ru=f"#{reminder_id} · {when}, повторяется {repeat} · {text}",
    )


@phrase
def reminders_footer() -> Say:
    return Say(
        en=(
            "Cancel one with /reminders cancel <id>; set your time zone with "
            "/reminders timezone <Area/City>."
        ),
        ru=(
            "Отменить: /reminders cancel <номер>; задать свой часовой пояс: "
            "/reminders timezone <Регион/Город>."
        ),
    )


@phrase
def reminder_cancelled(reminder_id: str, text: str) -> Say:
    return Say(
        en=f"Cancelled reminder #{reminder_id}: {text}",
        ru=f"Напоминание #{reminder_id} отменено: {text}",
    )


@phrase
def timezone_set(zone: str, now: str) -> Say:
    return Say(
        en=f"Your time zone is now {zone} (it is {now} there). New reminders use it.",
        ru=f"Ваш часовой пояс теперь {zone} (там сейчас {now}). Новые напоминания будут по нему.",
    )


@phrase
def timezone_is(zone: str, now: str) -> Say:
    return Say(
        en=f"Your time zone is {zone} (it is {now} there).",
        ru=f"Ваш часовой пояс: {zone} (там сейчас {now}).",
    )


@phrase
def reminders_usage() -> Say:
    return Say(
        en=(
            "Usage: /reminders lists this chat's reminders; /reminders cancel <id> cancels "
            "one; /reminders timezone <Area/City> sets your time zone (e.g. Europe/Berlin)."
        ),
        ru=(
            "Как пользоваться: /reminders показывает напоминания этого чата; "
            "/reminders cancel <номер> отменяет одно; /reminders timezone <Регион/Город> "
            "задаёт ваш часовой пояс (например, Europe/Moscow)."
        ),
    )


# Refusals of `/reminders` (the tool's reach the model in English): each says what to do.


@phrase
def reminder_not_found(reminder_id: str) -> Say:
    return Say(
        en=f"There is no reminder #{reminder_id} in this chat (/reminders lists them).",
        ru=f"В этом чате нет напоминания #{reminder_id} (список: /reminders).",
    )


@phrase
def reminder_not_yours(reminder_id: str) -> Say:
    return Say(
        en=(
            f"Reminder #{reminder_id} was set by someone else; only they or the bot's "
            "operators can cancel it."
        ),
        ru=(
            f"Напоминание #{reminder_id} поставил кто-то другой: отменить его может только "
            "он сам или администратор бота."
        ),
    )


@phrase
def unknown_zone(zone: str) -> Say:
    return Say(
        en=(
            f"Unknown time zone '{zone}': use an IANA name such as Europe/Berlin or "
            "America/New_York."
        ),
        ru=(
            f"Неизвестный часовой пояс «{zone}»: укажите имя из базы IANA, например "
            "Europe/Moscow или Asia/Yekaterinburg."
        ),
    )


@phrase
def reminder_not_saved(reason: str) -> Say:
    return Say(
        en=f"I could not save the reminder ({reason}); nothing was changed.",
        ru=f"Не удалось сохранить напоминание ({reason}); ничего не изменено.",
    )
