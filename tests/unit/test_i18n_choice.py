"""Which language the bot speaks: the user's `/language` choice, else their app's
`language_code`, else English; per message, never leaking into another chat's handling;
the choice kept privately on disk, a refused write changing nothing."""

import asyncio
import stat

import pytest

from bot.adapters.terminal import locale_language
from bot.app import BotApp
from bot.config.model import MediaConfig
from bot.conversation import ChatAddress, IncomingMessage
from bot.i18n import Language, current_language, language_of_code, speaking
from bot.i18n.catalogue import commands as texts
from bot.i18n.catalogue import notices
from bot.media.model import FileKind, UnreadableFile
from bot.media.reader import MediaReader
from bot.storage.choices import KeyedChoices
from bot.storage.languages import LanguageChoices
from tests.fakes.channel import RecordingChannel
from tests.fakes.full_disk import FullDisk
from tests.fakes.llm import ScriptedLlm, text

HERE = ChatAddress("test", "ivan")


@pytest.mark.parametrize(
    ("code", "language"),
    [
        ("ru", Language.RU),
        ("ru-RU", Language.RU),
        ("RU", Language.RU),
        ("ru_RU.UTF-8", Language.RU),
        ("en", Language.EN),
        ("en-GB", Language.EN),
        ("es", None),
        ("C.UTF-8", None),
        ("", None),
        (None, None),
    ],
)
def test_a_language_code_names_a_language_the_bot_speaks_or_none(code, language):
    assert language_of_code(code) is language


def test_the_choice_comes_before_the_app_language_and_english_after_both(tmp_path):
    choices = LanguageChoices(tmp_path / "languages.json")
    assert choices.language_for("7", "ru-RU") is Language.RU
    assert choices.language_for("7", "de") is Language.EN
    assert choices.language_for("7", None) is Language.EN


async def test_a_choice_overrides_survives_a_restart_and_auto_forgets_it(tmp_path):
    path = tmp_path / "languages.json"
    choices = LanguageChoices(path)
    assert await choices.choose("7", Language.EN)
    assert choices.language_for("7", "ru") is Language.EN
    assert choices.language_for("8", "ru") is Language.RU, "one user's choice is theirs alone"
    again = LanguageChoices(path)
    assert again.language_for("7", "ru") is Language.EN
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert await again.choose("7", None)
    assert LanguageChoices(path).language_for("7", "ru") is Language.RU


async def test_a_write_the_disk_refuses_changes_nothing(tmp_path, monkeypatch):
    choices = LanguageChoices(tmp_path / "languages.json")
    disk = FullDisk(monkeypatch, tmp_path)
    assert not await choices.choose("7", Language.RU)
    assert disk.refused and choices.chosen("7") is None
    disk.full = False
    assert await choices.choose("7", Language.RU) and choices.chosen("7") is Language.RU


def test_a_damaged_file_starts_afresh_and_says_so(tmp_path, caplog):
    path = tmp_path / "languages.json"
    path.write_text('{"users": {"7": "klingon"}}')
    assert LanguageChoices(path).chosen("7") is None
    assert "[Language] /language" in caplog.text and "unreadable" in caplog.text


async def test_keyed_choices_keep_the_file_format_of_older_versions(tmp_path):
    path = tmp_path / "chat-models.json"
    path.write_text('{"models": {"telegram:1": "big-model"}}')
    choices = KeyedChoices(path, "models", str, "[Models] /model")
    assert choices.get("telegram:1") == "big-model"
    assert await choices.choose("telegram:2", "small-model")
    assert path.read_text().replace(" ", "").replace("\n", "") == (
        '{"models":{"telegram:1":"big-model","telegram:2":"small-model"}}'
    )


async def test_each_task_speaks_its_own_language_and_outside_any_english():
    async def render(language: Language) -> str:
        with speaking(language):
            await asyncio.sleep(0)  # the other task runs in between
            return texts.nothing_to_stop()

    russian, english = await asyncio.gather(render(Language.RU), render(Language.EN))
    assert russian.startswith("Останавливать нечего") and english.startswith("There is nothing")
    assert current_language() is Language.EN


def test_the_terminal_takes_the_locale_by_posix_precedence():
    assert locale_language({"LANG": "ru_RU.UTF-8"}) == "ru_RU.UTF-8"
    assert locale_language({"LANG": "ru_RU.UTF-8", "LC_ALL": "en_US.UTF-8"}) == "en_US.UTF-8"
    assert locale_language({"LC_MESSAGES": "ru_RU", "LANG": "en_US"}) == "ru_RU"
    assert locale_language({}) is None


async def test_commands_and_apologies_follow_the_senders_language(settings):
    broken = RuntimeError("the model broke")  # no notice for it: the turn ends in an apology
    app = BotApp.build(settings, llm=ScriptedLlm(text("Привет!"), broken))
    channel = RecordingChannel()

    def said(words: str, code: str | None = "ru") -> IncomingMessage:
        return IncomingMessage(HERE, "ivan", words, language_code=code)

    try:
        await app.handle(said("/help"), channel)
        await app.handle(said("привет"), channel)
        await app.handle(said("ещё раз"), channel)
        await app.handle(said("/language en"), channel)
        await app.handle(said("/stop"), channel)
        await app.handle(said("/help", code=None), channel)
    finally:
        await app.aclose()
    help_ru, answer, apology, switched, stop_en, help_en = channel.texts()
    assert help_ru.startswith("Команды:\n") and "/new — начать разговор заново" in help_ru
    assert answer == "Привет!", "the model's answer is the model's, in whatever it wrote"
    with speaking(Language.RU):
        assert apology == notices.no_answer()
    assert switched == "I speak English with you (your choice)."
    assert stop_en == "There is nothing to stop: I'm not writing an answer in this chat."
    assert help_en.startswith("Commands:\n/new — start a fresh conversation")


async def test_the_reading_process_says_why_in_the_senders_language():
    """The file is read in a child process, which hears the language with its job."""
    reader, limits = MediaReader(), MediaConfig()
    with speaking(Language.RU), pytest.raises(UnreadableFile) as russian:
        await reader.read_document(b"%PDF-1.4\n garbage", FileKind.PDF, limits)
    with pytest.raises(UnreadableFile) as english:
        await reader.read_document(b"text\x00with a zero byte", FileKind.TEXT, limits)
    assert str(russian.value).startswith("Этот PDF, похоже, повреждён"), russian.value
    assert str(english.value) == "This file holds binary data, not text, so I can't read it."
