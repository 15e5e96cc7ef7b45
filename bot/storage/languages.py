"""`/language en|ru|auto`: each user's choice, kept in `<data dir>/languages.json`.

A user who chose nowhere is spoken to in their app's language (Telegram's `language_code`),
else English. The choice belongs to the person, wherever they write, like `/remember`.
"""

from __future__ import annotations

from pathlib import Path

from bot.i18n.language import FALLBACK, Language, language_of_code
from bot.storage.choices import ChoiceStore, KeyedChoices


class LanguageChoices:
    """Per-user language; implements the `LanguagePreference` port."""

    def __init__(self, path: Path | None, store: ChoiceStore[Language] | None = None) -> None:
        """`path` None: choices last until the bot stops (tests); `store`: where they live
        instead (PostgreSQL)."""
        self._choices = store or KeyedChoices(path, "users", Language, "[Language] /language")

    def chosen(self, user_id: str) -> Language | None:
        return self._choices.get(user_id)

    def language_for(self, user_id: str, language_code: str | None) -> Language:
        """The user's choice, else the language their app is set to, else English."""
        return self.chosen(user_id) or language_of_code(language_code) or FALLBACK

    async def choose(self, user_id: str, language: Language | None) -> bool:
        """Record a choice (None: auto again); False when the disk refused it."""
        return await self._choices.choose(user_id, language)
