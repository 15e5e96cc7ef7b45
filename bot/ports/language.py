"""Which language a user is spoken to in (`bot/i18n/`)."""

from __future__ import annotations

from typing import Protocol

from bot.i18n.language import Language


class LanguagePreference(Protocol):
    def language_for(self, user_id: str, language_code: str | None) -> Language:
        """The user's own choice, else `language_code` (their app's), else English."""
        ...
