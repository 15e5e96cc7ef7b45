"""The whole catalogue of the bot's own texts (`bot/i18n/catalogue/`), checked before any user
sees it: every text exists in every language, shows every placeholder it is given in each,
and leaves no `{placeholder}` unfilled; every command of a built bot has a menu description
in every language, within Telegram's limits; every memory store has a Russian name."""

import inspect
import itertools
import re
import typing

import pytest

from bot.adapters.telegram.inbound import ATTACHMENT_KINDS, Attachment
from bot.app import BotApp
from bot.i18n import Language, Phrase, Say
from bot.i18n.catalogue import MODULES, memory, notices, telegram
from bot.memory.model import TRAITS
from bot.rag.queue import IndexQueue
from bot.storage.sessions import JsonSessionStore
from tests.fakes.llm import ScriptedLlm
from tests.unit.test_app_composition import telegram_options

PHRASES = [
    value for module in MODULES for value in vars(module).values() if isinstance(value, Phrase)
]
LOOKUPS = {memory.store_name.name, memory.item_kind.name, notices.backlog_name.name}
"""Phrases whose argument is a key of their own table, checked against the real keys below."""
CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
UNFILLED = re.compile(r"\{[a-z_]+[^}]*\}")
INT_SAMPLES = (1, 3, 5, 21, 112, 12345)


def samples(annotation: object, name: str) -> list[object]:
    """Values for one placeholder: strings that can be found in the text, numbers that take
    every plural form, both booleans, every literal."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    if annotation is bool:
        return [True, False]
    if annotation is int:
        return list(INT_SAMPLES)
    if annotation is float:
        return [2.5, 120.0]
    if annotation is str:
        return [f"⟪{name}⟫"]
    raise AssertionError(f"placeholder {name} is {annotation}: use str, int, float, bool, Literal")


def calls(entry: Phrase) -> list[dict[str, object]]:
    """Every combination of the samples (the catalogue's phrases have few placeholders)."""
    hints = typing.get_type_hints(entry.versions)
    names = list(inspect.signature(entry.versions).parameters)
    values = [samples(hints[name], name) for name in names]
    return [
        dict(zip(names, combination, strict=True)) for combination in itertools.product(*values)
    ]


def shows(text: str, value: object) -> bool:
    digits = re.sub(r"[,\u00a0 ]", "", text)
    if isinstance(value, bool) or (isinstance(value, str) and not value.startswith("⟪")):
        return True  # a switch or a literal picks the wording; it need not be shown
    if isinstance(value, float):  # 2.5 or 2,5; a duration of 120 s may read "2 minutes"
        shown = {f"{value:g}", f"{value:g}".replace(".", ","), f"{value / 60:g}"}
        return any(number in text for number in shown)
    if isinstance(value, int):
        return str(value) in digits
    return str(value) in text


def test_the_catalogue_is_found_and_names_are_unique():
    assert len(PHRASES) > 100
    names = [entry.name for entry in PHRASES]
    assert len(names) == len(set(names)), "a text's name is its one key"


def test_say_has_one_field_per_language():
    assert [field for field in Say.__dataclass_fields__] == [lang.value for lang in Language]


@pytest.mark.parametrize(
    "entry",
    [p for p in PHRASES if p.name not in LOOKUPS],
    ids=lambda p: f"{p.versions.__module__}.{p.name}",
)
def test_every_text_is_in_every_language_with_every_placeholder(entry: Phrase):
    for arguments in calls(entry):
        versions = entry.say(**arguments)
        for language in Language:
            text = versions.in_(language)
            where = f"{entry.name}({arguments}) in {language}"
            assert text.strip(), f"{where} is empty"
            assert not UNFILLED.search(text), f"{where} leaves a placeholder unfilled: {text}"
            for name, value in arguments.items():
                assert shows(text, value), f"{where} does not show {name}: {text}"
        assert CYRILLIC.search(versions.ru), f"{entry.name}: the Russian is not Russian"
        assert not CYRILLIC.search(versions.en), f"{entry.name}: the English has Cyrillic"


def test_every_kind_of_memory_item_and_attachment_has_a_russian_name():
    for traits in TRAITS.values():
        assert CYRILLIC.search(memory.item_kind.say(traits.label).ru), traits.label
    for kind in ATTACHMENT_KINDS:
        assert Attachment(kind).spoken in telegram.KINDS_RU, kind
    for backlog in (IndexQueue, JsonSessionStore):  # what waits in memory while the disk is full
        assert backlog.unwritten_label in notices.BACKLOG_NAMES_RU, backlog


async def test_every_command_and_memory_store_of_a_built_bot_speaks_every_language(settings):
    """A command registered with a plain English description (not from the catalogue) fails
    here: it would show in English in the Russian menu."""
    app = BotApp.build(settings, llm=ScriptedLlm(), telegram=telegram_options(settings))
    try:
        for command in app.commands.menu():
            assert isinstance(command.description, Say), f"/{command.name} is not translated"
            for language in Language:
                assert 1 <= len(command.description_in(language)) <= 256, command.name
        for store in app.memory_stores:
            assert store.label in memory.STORE_NAMES_RU, f"{store.label!r} has no Russian name"
    finally:
        await app.aclose()
