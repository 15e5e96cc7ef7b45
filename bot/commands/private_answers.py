"""Replies to commands, in a group sent to the member who asked and to nobody else.

`/memory`, `/forget` and `/reminders` answer with what one member should see alone (what the
bot remembers, their reminders and time zone). Asked in a group, the answer goes to the
asker's private chat and the group sees one line saying so. Telegram lets a bot write to a
person only once they have started a private chat with it; until then the group is told to
start one, and nothing of the answer is shown there.
"""

from __future__ import annotations

import logging

from bot.commands.registry import CommandCall, CommandRegistry
from bot.i18n.catalogue import commands as texts
from bot.ports.channel import ChannelPort, DeliveryFailed, PrivateReplies, RecipientUnreachable

log = logging.getLogger(__name__)


async def answer_command(
    registry: CommandRegistry, call: CommandCall, reply: str, channel: ChannelPort
) -> None:
    """Deliver `reply` to `call`: where it was asked, or in private when it is the asker's
    alone (`Command.private_in_groups`), with a pointer in the group."""
    address = call.message.address
    if not registry.answers_privately(call):
        await channel.send(address, reply)
        return
    await channel.send(address, await _in_private(call, reply, channel))


async def _in_private(call: CommandCall, reply: str, channel: ChannelPort) -> str:
    """Send `reply` to the asker alone; what the group is told instead."""
    if not isinstance(channel, PrivateReplies):
        return texts.ask_in_private(call.name)
    try:
        await channel.send_privately(
            call.message.user_id, f"{texts.asked_in_a_group(call.name)}\n\n{reply}"
        )
    except RecipientUnreachable:
        log.info("[Commands] /%s: the asker has no private chat with the bot", call.name)
        return texts.start_a_private_chat_first(call.name)
    except DeliveryFailed as exc:
        log.warning("[Commands] /%s: the private answer failed: %s", call.name, exc)
        return texts.private_answer_failed(call.name)
    return texts.answered_in_private(call.name)
