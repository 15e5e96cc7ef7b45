"""`/new`, `/stop`, `/help` and `/status`: the commands every channel has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.conversation.compaction import SessionCompactor, SummaryFailed
from bot.conversation.scope import memory_scope_of
from bot.ports.models import ChatModelChoice
from bot.ports.sessions import SessionStore
from bot.ports.status import OperatorStatusProvider, StatusProvider
from bot.ports.turns import TurnStopper
from bot.tools import ToolRegistry


@dataclass
class CoreCommands:
    """Handlers of the channel-independent commands, bound to the stores they read."""

    registry: CommandRegistry
    sessions: SessionStore
    config: RuntimeConfigStore
    tools: ToolRegistry
    llm_endpoint: str
    status_providers: Sequence[StatusProvider] = ()
    turns: TurnStopper | None = None
    compactor: SessionCompactor | None = None
    models: ChatModelChoice | None = None

    def register(self) -> None:
        self.registry.register(Command("new", "start a fresh conversation", self.new))
        if self.turns is not None:
            self.registry.register(Command("stop", "stop the answer I am writing", self.stop))
        if self.compactor is not None:
            self.registry.register(
                Command("compact", "summarise our conversation so far", self.compact)
            )
        self.registry.register(Command("status", "model, session and memory status", self.status))
        self.registry.register(Command("help", "list the commands", self.help))

    async def new(self, call: CommandCall) -> str:
        """Stops an answer in progress first: its turn would save the old conversation back."""
        key = call.message.address.session_key
        if self.turns is not None:
            await self.turns.stop(key)
        await self.sessions.archive(key)
        return (
            "Started a fresh conversation. What we said before is set aside; "
            "what I remember long-term stays."
        )

    async def stop(self, call: CommandCall) -> str:
        """In a group, only who asked for the answer (or an operator) may stop it: one member
        must not be able to cut off everyone else's answers."""
        assert self.turns is not None, "registered only with a turn stopper"
        key, message = call.message.address.session_key, call.message
        asked_by = self.turns.asked_by(key)
        if (
            memory_scope_of(message).is_group
            and asked_by not in (None, message.user_id)
            and not message.operator
        ):
            return "Only whoever asked for this answer (or an operator) can stop it."
        if not await self.turns.stop(key):
            return "There is nothing to stop: I'm not writing an answer in this chat."
        return (
            "Stopped. What I had written so far stays in our conversation; "
            "messages you sent before /stop are answered next."
        )

    async def compact(self, call: CommandCall) -> str:
        """Folds every turn but the last into the summary; a failure drops nothing."""
        assert self.compactor is not None, "registered only with a compactor"
        session = await self.sessions.load(call.message.address.session_key)
        try:
            limits, user_id = self.config.current().llm, call.message.user_id
            folded = await self.compactor.compact_now(session, limits, user_id)
        except SummaryFailed as exc:
            return f"I couldn't summarise our conversation just now ({exc}); nothing was lost."
        if not folded:
            return "There is nothing to compact yet: our conversation is one exchange or less."
        await self.sessions.save(session)
        return (
            f"Compacted: {folded} older messages are now a summary of "
            f"{len(session.summary):,} characters; our last exchange stays word for word."
        )

    async def help(self, call: CommandCall) -> str:
        return self.registry.help_text()

    async def status(self, call: CommandCall) -> str:
        """Model, chat, switches, services. Where the bot runs (the LLM host, the config
        file's path) is only for operators (`IncomingMessage.operator`)."""
        operator = call.message.operator
        config = self.config.current()
        session = await self.sessions.load(call.message.address.session_key)
        tools = ", ".join(t.name for t in self.tools.enabled(config.tools)) or "none"
        since = session.created_at.strftime("%Y-%m-%d %H:%M UTC")
        turns, messages = session.turn_count, len(session.messages)
        size = f"{turns} turn{'' if turns == 1 else 's'} ({messages} messages)"
        if session.summary:
            size += f", older ones summarised ({len(session.summary):,} characters)"
        model = config.llm.model
        if self.models is not None:
            model = self.models.model_for(call.message.address.session_key, config.llm)
        if model != config.llm.model:
            model += " (chosen for this chat with /model)"
        if operator:
            model += f" at {self.llm_endpoint}"
        lines = [
            f"Model: {model}",
            f"This chat: {size} since {since}",
            f"Tools: {tools}",
            f"Short-term memory: {_on_off(config.memory.enabled)}",
            f"Long-term memory (LightRAG): {_on_off(config.rag.enabled)}",
            f"Streaming replies (Telegram): {_on_off(config.telegram.streaming)}",
            f"Looking at photos (llm.vision): {_on_off(config.llm.vision)}",
        ]
        scope = memory_scope_of(call.message)
        for provider in self.status_providers:
            if operator and isinstance(provider, OperatorStatusProvider):
                lines += await provider.operator_status_lines(scope)
            else:
                lines += await provider.status_lines(scope)
        lines.append(self._config_line(operator))
        return "\n".join(lines)

    def _config_line(self, operator: bool) -> str:
        if not self.config.last_error:
            return (
                f"Runtime config: {self.config.path} (valid)"
                if operator
                else "Runtime config: valid"
            )
        if not operator:
            return (
                "⚠ Runtime config: the last edit was rejected; the previous valid one is in force."
            )
        return (
            f"⚠ Runtime config: the last edit of {self.config.path} was rejected "
            f"({self.config.last_error}); the previous valid config is in force."
        )


def _on_off(flag: bool) -> str:
    return "on" if flag else "off"
