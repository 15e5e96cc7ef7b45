"""`/model`: which model answers in this chat, chosen from `llm.models`."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.i18n.catalogue import commands as texts
from bot.storage.chat_models import ChatModels


@dataclass
class ModelCommands:
    """`/model` lists the choice, `/model <name>` picks one, `/model default` goes back to
    `llm.model`. The choice belongs to the chat (a group's, each forum topic's)."""

    registry: CommandRegistry
    models: ChatModels
    config: RuntimeConfigStore

    def register(self) -> None:
        self.registry.register(Command("model", texts.about_model.say(), self.model))

    async def model(self, call: CommandCall) -> str:
        limits = self.config.current().llm
        key = call.message.address.session_key
        current = self.models.model_for(key, limits)
        wanted = call.args.strip()
        allowed = [limits.model, *(m for m in limits.models if m != limits.model)]
        if not wanted:
            if len(allowed) == 1:
                return texts.model_only_one(current)
            listing = "\n".join(f"{'→ ' if m == current else '  '}{m}" for m in allowed)
            return texts.model_listing(listing)
        if wanted.lower() == "default" or wanted == limits.model:
            if not await self.models.choose(key, None):
                return texts.model_not_recorded(current)
            return texts.model_default_again(limits.model)
        if wanted not in limits.models:
            return texts.model_not_allowed(wanted)
        if not await self.models.choose(key, wanted):
            return texts.model_not_recorded(current)
        return texts.model_chosen(wanted)
