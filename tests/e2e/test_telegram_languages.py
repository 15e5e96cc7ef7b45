"""The bot's own texts in the user's language, through the real PTB Application and the
emulated Bot API: picked from Telegram's `language_code`, overridden with `/language`, kept
across a restart; the command menu published per language."""

import json

from bot.i18n import Language, speaking
from bot.i18n.catalogue import commands as command_texts
from bot.i18n.catalogue import notices
from tests.e2e.test_telegram_bot import ALICE, replies, start_bot  # noqa: F401 (a fixture)
from tests.fakes.openai_server import Reply
from tests.fakes.telegram_server import User

IVAN = User(1003, "Иван", "ivan", language_code="ru")
IVAN_RU_RU = User(1004, "Пётр", "petr", language_code="ru-RU")
JUAN = User(1005, "Juan", "juan", language_code="es")
OLGA = User(6667, "Ольга", "olga_stranger", language_code="ru")


def in_russian(text_of) -> str:
    with speaking(Language.RU):
        return text_of()


async def test_the_menu_is_published_in_english_and_in_russian(start_bot, telegram):  # noqa: F811
    await start_bot(allowed=(ALICE.id,))
    english = {c["command"]: c["description"] for c in telegram.commands}
    russian = {c["command"]: c["description"] for c in telegram.commands_by_language["ru"]}
    assert english.keys() == russian.keys() and "language" in english
    assert english["new"] == "start a fresh conversation"
    assert russian["new"] == "начать разговор заново"


async def test_a_russian_app_gets_help_and_notices_in_russian(
    start_bot,  # noqa: F811
    telegram,
    fake_llm,
):
    await start_bot(allowed=(IVAN.id, IVAN_RU_RU.id, JUAN.id))
    telegram.send_text(IVAN, "/help")
    (help_text,) = await replies(telegram, IVAN.id)
    assert help_text.text.startswith("Команды:\n/new — начать разговор заново")
    assert "/language — мой язык: en, ru или auto" in help_text.text
    telegram.send_text(IVAN_RU_RU, "/stop")
    (nothing,) = await replies(telegram, IVAN_RU_RU.id)
    assert nothing.text == in_russian(command_texts.nothing_to_stop)
    fake_llm.script(Reply(status=400, error_message="no such parameter"))
    telegram.send_text(IVAN, "что нового?")
    (_, apology) = await replies(telegram, IVAN.id, 2)
    assert apology.text == "Языковая модель отклонила этот запрос (HTTP 400)."
    telegram.send_text(JUAN, "/stop")
    (english,) = await replies(telegram, JUAN.id)
    assert english.text == command_texts.nothing_to_stop(), "Spanish falls back to English"
    telegram.send_text(OLGA, "привет")
    (refusal,) = await replies(telegram, OLGA.id)
    assert refusal.text.startswith("Извините, это личный ассистент"), "turned away in Russian"
    assert refusal.text.endswith(str(OLGA.id))


async def test_language_switches_and_the_choice_survives_a_restart(
    start_bot,  # noqa: F811
    telegram,
    settings,
):
    bot = await start_bot(allowed=(IVAN.id,))
    telegram.send_text(IVAN, "/language")
    (state,) = await replies(telegram, IVAN.id)
    assert state.text.startswith("Я говорю с вами по-русски (авто")
    telegram.send_text(IVAN, "/language en")
    (_, switched) = await replies(telegram, IVAN.id, 2)
    assert switched.text == "I speak English with you (your choice)."
    choices = json.loads((settings.data_dir / "languages.json").read_text())
    assert choices == {"users": {str(IVAN.id): "en"}}
    assert (settings.data_dir / "languages.json").stat().st_mode & 0o777 == 0o600
    await bot.stop()

    await start_bot(allowed=(IVAN.id,))
    telegram.send_text(IVAN, "/stop")
    (*_, after_restart) = await replies(telegram, IVAN.id, 3)
    assert after_restart.text == command_texts.nothing_to_stop(), "still English for him"
    telegram.send_text(IVAN, "/language auto")
    (*_, auto) = await replies(telegram, IVAN.id, 4)
    assert auto.text.startswith("Я говорю с вами по-русски (авто: язык вашего приложения")
    telegram.send_text(IVAN, "/new")
    (*_, fresh) = await replies(telegram, IVAN.id, 5)
    assert fresh.text == in_russian(command_texts.fresh_conversation)
    assert notices.stopped_note() == "⏹ Stopped."  # outside a message: the fallback
