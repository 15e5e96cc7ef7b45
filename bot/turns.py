"""From an incoming message to a reply: commands, per-chat order, session, pipeline, guarantee."""

from __future__ import annotations

import asyncio
import logging

from bot.chat_locks import ChatLanes
from bot.commands import CommandRegistry, parse_command
from bot.commands.private_answers import answer_command
from bot.compaction import SessionCompactor
from bot.config import RuntimeConfigStore
from bot.config.model import LlmConfig
from bot.conversation import ChatMessage, IncomingMessage, Session
from bot.i18n import speaking
from bot.i18n.catalogue import notices
from bot.pipeline import Pipeline, TurnContext
from bot.pipeline.response_routing import deliver
from bot.ports.channel import ChannelPort
from bot.ports.language import LanguagePreference
from bot.ports.memory import RememberingPreference
from bot.ports.sessions import SessionStore
from bot.running_turns import RunningTurns, TurnStopped
from bot.storage.languages import LanguageChoices

log = logging.getLogger(__name__)


class TurnRunner:
    """Handles one message of one chat, start to end.

    Turns of a chat run one at a time, in arrival order; commands run at once, never behind a
    turn, and a turn waits for the commands sent before it (`ChatLanes`). The session, with
    the user's message, is saved after the turn whatever failed; and the user always gets a
    reply, an honest apology at worst. A turn stopped by the user (`RunningTurns.stop`) keeps
    what it had shown, marked as stopped.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        sessions: SessionStore,
        config: RuntimeConfigStore,
        commands: CommandRegistry,
        lanes: ChatLanes | None = None,
        remembering: RememberingPreference | None = None,
        running: RunningTurns | None = None,
        compactor: SessionCompactor | None = None,
        languages: LanguagePreference | None = None,
    ) -> None:
        self._pipeline = pipeline
        self._sessions = sessions
        self._config = config
        self._commands = commands
        self.lanes = lanes if lanes is not None else ChatLanes()  # an empty one is falsy
        self._remembering = remembering
        self.running = running or RunningTurns()
        self._compactor = compactor
        self._languages = languages or LanguageChoices(None)

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        """Handle `message`, every text of the bot in the sender's language (`bot/i18n/`)."""
        language = self._languages.language_for(message.user_id, message.language_code)
        with speaking(language):
            await self._handle(message, channel)

    async def _handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        key = message.address.session_key
        command = parse_command(message)
        if command is not None:
            async with self.lanes.command(key):
                reply = await self._commands.run(command)
                await answer_command(self._commands, command, reply, channel)
            return
        async with self.lanes.turn(key), self.running.turn(key, message.user_id):
            await self._turn(message, channel)

    async def _turn(self, message: IncomingMessage, channel: ChannelPort) -> None:
        config = self._config.current()
        session = await self._sessions.load(message.address.session_key)
        if message.external_id:
            if session.answered(message.external_id):
                # Redelivered after a crash, but its turn was saved: it has had its answer.
                log.info("[Turn] %s was answered before a restart; skipped", message.external_id)
                return
            session.forget_unanswered(message.external_id)
        if message.answered_before is not None:
            await self._record_answered(message, session, message.answered_before)
            return
        session.messages.append(_as_chat_message(message))

        ctx = TurnContext(
            message=message,
            session=session,
            config=config,
            channel=channel,
            stream=channel.open_stream(message.address),
            remembering=self._remembers(message.user_id),
        )
        shutting_down = False
        try:
            await self.running.run(message.address.session_key, self._pipeline.run(ctx))
        except TurnStopped:
            _keep_what_was_shown(ctx)
        except asyncio.CancelledError:
            ctx.notice, shutting_down = notices.interrupted(), True
            raise
        finally:
            session.messages.extend(ctx.turn_messages)
            await self._ensure_reply(ctx)
            await self._keep_bounded(session, config.llm, not shutting_down, message.user_id)
            await self._sessions.save(session)

    async def _keep_bounded(
        self, session: Session, limits: LlmConfig, summarise: bool, user_id: str
    ) -> None:
        """Older turns become the session's summary once it passes its budget (after the
        reply, so the user never waits for it); without a compactor they are dropped."""
        if self._compactor is None:
            session.trim(limits.session_max_messages)
            return
        try:
            await self._compactor.keep_bounded(session, limits, summarise, user_id)
        except Exception as exc:  # the turn is saved whatever happens here
            log.error("[Turn] compacting %s failed: %s", session.key, exc)
            session.trim(limits.session_max_messages)

    def _remembers(self, user_id: str) -> bool:
        return self._remembering is None or self._remembering.is_remembering(user_id)

    async def _record_answered(
        self, message: IncomingMessage, session: Session, reply: str
    ) -> None:
        """A kill came after the reply went out but before the turn was saved: save it now,
        with the reply the user already has, instead of answering a second time."""
        log.info("[Turn] %s was answered just before a restart; saved now", message.external_id)
        session.messages.extend([_as_chat_message(message), ChatMessage.assistant(reply)])
        await self._sessions.save(session)

    @staticmethod
    async def _ensure_reply(ctx: TurnContext) -> None:
        """The reply guarantee: deliver the reply if the pipeline did not (a system failed,
        the turn was cancelled, or routing itself could not send)."""
        if ctx.reply_sent:
            return
        try:
            await deliver(ctx)
        except Exception as exc:
            log.error("[Turn] could not reply to %s: %s", ctx.message.address.session_key, exc)


def _keep_what_was_shown(ctx: TurnContext) -> None:
    """A stopped turn: what the user saw of the answer stays, in the chat and in the session,
    marked as stopped; when nothing was shown, nothing is sent (`/stop` answers for it)."""
    log.info("[Turn] %s stopped by the user", ctx.session.key)
    if ctx.final_text is not None:
        return  # the answer was complete: it goes out as it is
    said = ctx.streamed_text.rstrip()
    note = notices.stopped_note()
    stopped = f"{said}\n\n{note}" if said else note
    ctx.turn_messages = [ChatMessage.assistant(stopped)]
    if said:
        ctx.notice = stopped
    else:
        ctx.reply_sent = True


def _as_chat_message(message: IncomingMessage) -> ChatMessage:
    return ChatMessage.user(message.text, message.received_at, message.external_id, message.user_id)
