"""Order 60: deliver the reply through the channel the message came from."""

from __future__ import annotations

from bot.pipeline.context import TurnContext

NO_ANSWER = (
    "Sorry, something went wrong on my side and I have no answer for this message. "
    "Please try again."
)


def reply_text(ctx: TurnContext) -> str:
    """The answer, else the notice explaining why there is none, else an honest apology."""
    return ctx.final_text or ctx.notice or NO_ANSWER


class ResponseRoutingSystem:
    """Finishes the streamed reply, or sends the whole reply when the channel does not stream."""

    name = "ResponseRouting"
    order = 60

    def should_process(self, ctx: TurnContext) -> bool:
        return not ctx.reply_sent

    async def process(self, ctx: TurnContext) -> None:
        text = reply_text(ctx)
        if ctx.stream is not None:
            await ctx.stream.finish(text)
        else:
            await ctx.channel.send(ctx.message.address, text)
        ctx.reply_sent = True
