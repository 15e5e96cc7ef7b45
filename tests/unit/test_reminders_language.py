"""Reminders speak the language of the person who set them: `/reminders` answers in the
asker's, and a reminder, sent by the scheduler outside any message, arrives in its setter's
(their `/language` choice then, else the language they set it in), and the chat's session
keeps the very text sent. The model, reading the tool's results, gets English."""

from __future__ import annotations

import json

from bot.app import BotApp
from bot.chat_locks import ChatLanes
from bot.config.model import RemindersConfig
from bot.conversation import ChatAddress, IncomingMessage
from bot.i18n import Language, speaking
from bot.i18n.catalogue.reminders import wall_time_shown
from bot.reminders import ReminderBook, ReminderDesk, Requester
from bot.reminders.scheduler import ReminderScheduler
from bot.storage.languages import LanguageChoices
from bot.storage.sessions import JsonSessionStore
from tests.fakes.channel import RecordingChannel
from tests.fakes.llm import ScriptedLlm, calls, text

HERE = ChatAddress("test", "ivan")
WEEKLY = "FREQ=WEEKLY;BYDAY=MO;BYHOUR=8;BYMINUTE=0"


def _add_in_minutes(minutes: int, what: str) -> str:
    return json.dumps({"action": "add", "text": what, "in_minutes": minutes})


async def test_a_russian_speakers_reminder_arrives_in_russian_and_reminders_answers_in_it(
    settings, clock
):
    llm = ScriptedLlm(calls(("reminders", _add_in_minutes(30, "позвонить Ольге"))), text("Готово"))
    app = BotApp.build(settings, llm=llm, clock=clock)
    channel = RecordingChannel()
    app.reminders.deliver_through(channel)

    def said(words: str) -> IncomingMessage:
        return IncomingMessage(HERE, "ivan", words, language_code="ru-RU")

    try:
        await app.handle(said("напомни через полчаса позвонить Ольге"), channel)
        (reminder,) = await app.reminders.book.all()
        assert reminder.language is Language.RU
        tool_result = [m for m in llm.requests[-1].messages if m.role == "tool"][-1]
        assert (tool_result.content or "").startswith(f"Reminder #{reminder.id} set for ")

        await app.handle(said("/reminders"), channel)
        clock.advance(30 * 60)
        await app.reminders.fire_due()
        await app.handle(said(f"/reminders cancel {reminder.id}"), channel)
        await app.handle(said("/reminders timezone Europe/Moscow"), channel)
        await app.handle(said("/reminders timezone Mars/Olympus"), channel)
        await app.handle(said("/reminders что-то"), channel)
        session = await app.sessions.load(HERE.session_key)
    finally:
        await app.aclose()
    _, listing, delivered, cancelled, zone, unknown, usage = channel.texts()
    assert listing.startswith("Напоминания в этом чате (часовой пояс UTC, сейчас вс 01 мар 2026")
    assert f"#{reminder.id} · вс 01 мар 2026 12:30 · позвонить Ольге" in listing
    assert "Отменить: /reminders cancel <номер>" in listing
    assert delivered == (
        f"⏰ Напоминание: позвонить Ольге\n(#{reminder.id} · /reminders, чтобы посмотреть или "
        "отменить)"
    )
    assert session.messages[-1].content == delivered, "the session keeps what was sent"
    assert cancelled == f"В этом чате нет напоминания #{reminder.id} (список: /reminders)."
    assert zone.startswith("Ваш часовой пояс теперь Europe/Moscow (там сейчас вс 01 мар 2026 15:")
    assert unknown.startswith("Неизвестный часовой пояс «Mars/Olympus»")
    assert usage.startswith("Как пользоваться: /reminders")


class Parts:
    """A book, a desk and a scheduler with each person's `/language`, as the app wires them."""

    def __init__(self, folder, clock) -> None:
        self.book = ReminderBook(folder / "reminders" / "reminders.json")
        self.sessions = JsonSessionStore(folder / "sessions")
        self.languages = LanguageChoices(folder / "languages.json")
        self.channel = RecordingChannel()
        self.scheduler = ReminderScheduler(
            self.book, self.sessions, ChatLanes(), clock, self.languages
        )
        self.scheduler.deliver_through(self.channel)
        self.desk = ReminderDesk(self.book, RemindersConfig, clock, on_change=self.scheduler.wake)


async def test_a_late_repeating_reminder_says_when_it_was_due_and_next_time_in_russian(
    tmp_path, clock
):
    parts = Parts(tmp_path, clock)
    with speaking(Language.RU):
        await parts.desk.add(Requester(HERE, "ivan"), "отчёт", repeat=WEEKLY)
    clock.advance(3 * 24 * 3600)  # Sunday noon to Wednesday noon: Monday 8:00 was missed
    await parts.scheduler.fire_due()
    ((_, sent),) = parts.channel.sent
    assert sent.splitlines()[:3] == [
        "⏰ Напоминание: отчёт",
        "(Его время было пн 02 мар 2026 08:00, но тогда я не смог его отправить.)",
        "В следующий раз: пн 09 мар 2026 08:00.",
    ]


async def test_the_language_chosen_by_delivery_time_wins_over_the_one_set_in(tmp_path, clock):
    parts = Parts(tmp_path, clock)
    with speaking(Language.RU):
        await parts.desk.add(Requester(HERE, "ivan"), "позвонить Ольге", in_minutes=10)
    await parts.desk.add(Requester(HERE, "anna"), "call Olga", in_minutes=10)
    await parts.languages.choose("ivan", Language.EN)
    await parts.languages.choose("anna", Language.RU)
    clock.advance(10 * 60)
    await parts.scheduler.fire_due()
    sent = sorted(message for _, message in parts.channel.sent)
    assert sent[0].startswith("⏰ Reminder: позвонить Ольге\n(#")
    assert sent[1].startswith("⏰ Напоминание: call Olga\n(#")


async def test_a_reminder_kept_before_languages_were_recorded_is_delivered_in_english(
    tmp_path, clock
):
    parts = Parts(tmp_path, clock)
    with speaking(Language.RU):
        await parts.desk.add(Requester(HERE, "ivan"), "позвонить Ольге", in_minutes=10)
    path = tmp_path / "reminders" / "reminders.json"
    saved = json.loads(path.read_text())
    assert saved["reminders"][0]["language"] == "ru"
    del saved["reminders"][0]["language"]  # the file as the version before wrote it
    path.write_text(json.dumps(saved))
    restarted = Parts(tmp_path, clock)
    clock.advance(10 * 60)
    await restarted.scheduler.fire_due()
    ((_, sent),) = restarted.channel.sent
    assert sent.startswith("⏰ Reminder: позвонить Ольге")


def test_times_read_in_the_readers_language(clock):
    moment = clock()
    assert wall_time_shown(moment) == "Sun 01 Mar 2026 12:00"
    with speaking(Language.RU):
        assert wall_time_shown(moment) == "вс 01 мар 2026 12:00"
        assert wall_time_shown(moment.replace(month=5, day=4)) == "пн 04 мая 2026 12:00"
