"""The bot's own texts in English and Russian: the language of each message, and the catalogue
(`bot/i18n/catalogue/`); each user's `/language` is kept by `bot/storage/languages.py`.
`docs/LANGUAGES.md` says how to add a text or a language."""

from bot.i18n.language import (
    FALLBACK,
    Language,
    current_language,
    language_of_code,
    speaking,
)
from bot.i18n.phrase import Phrase, Say, phrase

__all__ = [
    "FALLBACK",
    "Language",
    "Phrase",
    "Say",
    "current_language",
    "language_of_code",
    "phrase",
    "speaking",
]
