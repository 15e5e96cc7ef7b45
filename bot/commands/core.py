"""`/new`, `/stop`, `/help` and `/status`: the commands every channel has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.compaction import SessionCompactor, SummaryFailed
from bot.config import RuntimeConfigStore
from bot.conversation.scope import memory_scope_of
from bot.i18n.catalogue import commands as texts
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
        self.registry.register(Command("new", texts.about_new.say(), self.new))
        if self.turns is not None:
            self.registry.register(Command("stop", texts.about_stop.say(), self.stop))
        if self.compactor is not None:
            self.registry.register(Command("compact", texts.about_compact.say(), self.compact))
        self.registry.register(Command("status", texts.about_status.say(), self.status))
        self.registry.register(Command("help", texts.about_help.say(), self.help))

    async def new(self, call: CommandCall) -> str:
        """Stops an answer in progress first: its turn would save the old conversation back."""
        key = call.message.address.session_key
        if self.turns is not None:
            await self.turns.stop(key)
        await self.sessions.archive(key)
        return texts.fresh_conversation()

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
            return texts.only_who_asked_may_stop()
        if not await self.turns.stop(key):
            return texts.nothing_to_stop()
        return texts.stopped()

    async def compact(self, call: CommandCall) -> str:
        """Folds every turn but the last into the summary; a failure drops nothing."""
        assert self.compactor is not None, "registered only with a compactor"
        session = await self.sessions.load(call.message.address.session_key)
        try:
            limits, user_id = self.config.current().llm, call.message.user_id
            folded = await self.compactor.compact_now(session, limits, user_id)
        except SummaryFailed as exc:
            return texts.compact_failed(str(exc))
        if not folded:
            return texts.nothing_to_compact()
        await self.sessions.save(session)
        return texts.compacted(folded, len(session.summary))

    async def help(self, call: CommandCall) -> str:
        return self.registry.help_text()

    async def status(self, call: CommandCall) -> str:
        """Model, chat, switches, services. Where the bot runs (the LLM host, the config
        file's path) is only for operators (`IncomingMessage.operator`)."""
        operator = call.message.operator
        config = self.config.current()
        session = await self.sessions.load(call.message.address.session_key)
        tools = ", ".join(t.name for t in self.tools.enabled(config.tools)) or texts.none_listed()
        since = session.created_at.strftime("%Y-%m-%d %H:%M UTC")
        size = texts.status_session(session.turn_count, len(session.messages), since)
        if session.summary:
            size += texts.status_summarised(len(session.summary))
        model = config.llm.model
        if self.models is not None:
            model = self.models.model_for(call.message.address.session_key, config.llm)
        if model != config.llm.model:
            model = texts.status_model_chosen(model)
        if operator:
            model = texts.status_model_at(model, self.llm_endpoint)
        lines = [
            texts.status_model(model),
            size,
            texts.status_switches(
                tools,
                texts.on_off(config.memory.enabled),
                texts.on_off(config.rag.enabled),
                texts.on_off(config.telegram.streaming),
                texts.on_off(config.llm.vision),
                texts.language_name(),
            ),
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
            return texts.config_valid(str(self.config.path) if operator else "")
        if not operator:
            return texts.config_rejected()
        return texts.config_rejected_for_operator(str(self.config.path), self.config.last_error)
