"""Order 60: deliver the reply through the channel the message came from.

`deliver` is the one way a turn's reply goes out: this system calls it, and the turn runner's
reply guarantee calls it again when the pipeline did not get the reply out.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from bot.i18n.catalogue import notices
from bot.pipeline.context import TurnContext


def reply_text(ctx: TurnContext) -> str:
    """The answer, else the notice explaining why there is none, else an honest apology."""
    return ctx.final_text or ctx.notice or notices.no_answer()


async def deliver(ctx: TurnContext) -> None:
    """Send the reply: into the streamed message when there is one (so no half-written preview
    stays behind), else, or when finishing the stream fails, as a message of its own. Raises
    the last failure when no way worked.

    The message's `on_answered` hears of an answer the moment it is out, before the session is
    saved: the channel notes it, so a kill in between is recorded after a restart instead of
    being answered a second time. A notice or an apology is no answer: such a turn is tried
    again after a restart, as its notice says; but a notice with messages for the session (a
    document filed, `bot/pipeline/attachments.py`) is one, so the file is not filed twice."""
    text = reply_text(ctx)
    ways: list[Callable[[str], Awaitable[None]]] = []
    if ctx.stream is not None:
        ways.append(ctx.stream.finish)
    ways.append(functools.partial(ctx.channel.send, ctx.message.address))
    failure: Exception | None = None
    for way in ways:
        try:
            await way(text)
        except Exception as exc:  # the next way may still work; the caller logs the last
            failure = exc
            continue
        ctx.reply_sent = True
        if (ctx.final_text or ctx.turn_messages) and ctx.message.on_answered is not None:
            ctx.message.on_answered(text)
        return
    assert failure is not None
    raise failure


class ResponseRoutingSystem:
    """Finishes the streamed reply, or sends the whole reply when the channel does not stream."""

    name = "ResponseRouting"
    order = 60

    def should_process(self, ctx: TurnContext) -> bool:
        return not ctx.reply_sent

    async def process(self, ctx: TurnContext) -> None:
        await deliver(ctx)
