"""From an incoming message to a reply: commands, per-chat order, session, pipeline, guarantee."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.chat_locks import ChatLocks
from bot.commands import CommandRegistry, parse_command
from bot.config import RuntimeConfigStore
from bot.conversation import ChatMessage, IncomingMessage
from bot.pipeline import Pipeline, TurnContext
from bot.pipeline.response_routing import reply_text
from bot.ports.channel import ChannelPort
from bot.ports.memory import RememberingPreference
from bot.ports.sessions import SessionStore

log = logging.getLogger(__name__)

INTERRUPTED = (
    "I was stopped (the bot is shutting down) before I could finish answering this. "
    "If I haven't answered it once I'm back, please send it again."
)


class TurnRunner:
    """Handles one message of one chat, start to end.

    Turns of a chat run one at a time, in arrival order. The session, with the user's message,
    is saved after the turn whatever failed; and the user always gets a reply, an honest
    apology at worst.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        sessions: SessionStore,
        config: RuntimeConfigStore,
        commands: CommandRegistry,
        locks: ChatLocks | None = None,
        remembering: RememberingPreference | None = None,
    ) -> None:
        self._pipeline = pipeline
        self._sessions = sessions
        self._config = config
        self._commands = commands
        self.locks = locks or ChatLocks()
        self._remembering = remembering

    async def handle(self, message: IncomingMessage, channel: ChannelPort) -> None:
        async with self.locks.hold(message.address.session_key):
            command = parse_command(message)
            if command is not None:
                reply = await self._commands.run(command)
                await channel.send(message.address, reply)
                return
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
        user_message = ChatMessage.user(
            message.text, message.received_at, message.external_id, message.user_id
        )
        session.messages.append(user_message)

        ctx = TurnContext(
            message=message,
            session=session,
            config=config,
            channel=channel,
            stream=channel.open_stream(message.address),
            remembering=self._remembers(message.user_id),
        )
        try:
            await self._pipeline.run(ctx)
        except asyncio.CancelledError:
            ctx.notice = INTERRUPTED
            raise
        finally:
            session.messages.extend(ctx.turn_messages)
            session.trim(config.llm.session_max_messages)
            await self._ensure_reply(ctx)
            await self._sessions.save(session)

    def _remembers(self, user_id: str) -> bool:
        return self._remembering is None or self._remembering.is_remembering(user_id)

    @staticmethod
    async def _ensure_reply(ctx: TurnContext) -> None:
        """Deliver the reply if routing did not: into the streamed message when there is one
        (so no half-written preview is left behind), else as a message of its own."""
        if ctx.reply_sent:
            return
        text = reply_text(ctx)
        ways: list[Callable[[str], Awaitable[None]]] = []
        if ctx.stream is not None:
            ways.append(ctx.stream.finish)
        ways.append(lambda reply: ctx.channel.send(ctx.message.address, reply))
        for deliver in ways:
            try:
                await deliver(text)
                ctx.reply_sent = True
                return
            except Exception as exc:
                log.error("[Turn] could not reply to %s: %s", ctx.message.address.session_key, exc)
