"""`/language`: which language the bot speaks with you: `en`, `ru`, or `auto` (your app's)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.i18n import language_of_code, speaking
from bot.i18n.catalogue import commands as texts
from bot.storage.languages import LanguageChoices


@dataclass
class LanguageCommands:
    """The choice is the person's, wherever they write (`LanguageChoices`)."""

    registry: CommandRegistry
    choices: LanguageChoices

    def register(self) -> None:
        self.registry.register(Command("language", texts.about_language.say(), self.language))

    async def language(self, call: CommandCall) -> str:
        """Answers in the language it leaves in force, so the user sees the switch at once."""
        message, word = call.message, call.args.strip().lower()
        wanted = language_of_code(word)
        if word != "auto" and wanted is None:
            usage = texts.language_usage(_in_terminal(call))
            return f"{self._state(call)}\n{usage}"
        if not await self.choices.choose(message.user_id, wanted):
            return texts.choice_not_saved()
        return self._state(call)

    def _state(self, call: CommandCall) -> str:
        message = call.message
        now = self.choices.language_for(message.user_id, message.language_code)
        with speaking(now):
            chosen = self.choices.chosen(message.user_id) is not None
            return texts.language_state(chosen, _in_terminal(call))


def _in_terminal(call: CommandCall) -> bool:
    """The terminal's automatic language is the locale (`LANG`), not a Telegram app's."""
    return call.message.address.channel == "terminal"
