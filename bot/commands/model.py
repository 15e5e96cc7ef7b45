"""`/model`: which model answers in this chat, chosen from `llm.models`."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.storage.chat_models import ChatModels


@dataclass
class ModelCommands:
    """`/model` lists the choice, `/model <name>` picks one, `/model default` goes back to
    `llm.model`. The choice belongs to the chat (a group's, each forum topic's)."""

    registry: CommandRegistry
    models: ChatModels
    config: RuntimeConfigStore

    def register(self) -> None:
        self.registry.register(Command("model", "choose the model for this chat", self.model))

    async def model(self, call: CommandCall) -> str:
        limits = self.config.current().llm
        key = call.message.address.session_key
        current = self.models.model_for(key, limits)
        wanted = call.args.strip()
        allowed = [limits.model, *(m for m in limits.models if m != limits.model)]
        if not wanted:
            if len(allowed) == 1:
                return f"This chat uses {current}; the operator has listed no other models."
            listing = "\n".join(f"{'→ ' if m == current else '  '}{m}" for m in allowed)
            return f"Models (→ this chat's):\n{listing}\n\n/model <name> chooses one."
        if wanted.lower() == "default" or wanted == limits.model:
            if not await self.models.choose(key, None):
                return f"I couldn't record that just now; this chat still uses {current}."
            return f"This chat uses the default model again: {limits.model}."
        if wanted not in limits.models:
            return f"{wanted} is not one of the models I may use. Send /model to see them."
        if not await self.models.choose(key, wanted):
            return f"I couldn't record that just now; this chat still uses {current}."
        return f"This chat now uses {wanted}."
