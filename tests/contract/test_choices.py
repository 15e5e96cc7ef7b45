"""What every choice store promises (`ChoiceStore`, `bot/storage/choices.py`): a chat's
`/model` and `/voice`, a user's `/language`, each kind apart, kept across a restart, and a
choice taken back. The JSON files and PostgreSQL alike."""

from __future__ import annotations

from bot.i18n import Language


async def test_choices_are_read_back_after_a_restart_and_kinds_stay_apart(new_choices):
    models = await new_choices("model", str)
    voice = await new_choices("voice", bool)
    assert await models.choose("telegram:1", "big")
    assert await models.choose("telegram:2", "small")
    assert await voice.choose("telegram:1", False)
    assert models.get("telegram:1") == "big"  # at once, in the process that chose
    restarted = await new_choices("model", str)
    assert restarted.get("telegram:1") == "big" and restarted.get("telegram:2") == "small"
    assert restarted.get("telegram:3") is None
    voice_again = await new_choices("voice", bool)
    assert voice_again.get("telegram:1") is False and voice_again.get("telegram:2") is None


async def test_a_choice_changed_or_taken_back_stays_so(new_choices):
    languages = await new_choices("language", Language)
    assert await languages.choose("42", Language.RU)
    assert await languages.choose("7", Language.EN)
    assert await languages.choose("42", Language.EN)
    assert await languages.choose("7", None)
    assert languages.get("7") is None
    restarted = await new_choices("language", Language)
    assert restarted.get("42") is Language.EN
    assert restarted.get("7") is None
