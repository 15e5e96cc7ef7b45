"""A command whose reply is the asker's alone never shows it in a group, whatever the channel."""

from __future__ import annotations

from bot.commands import Command, CommandRegistry, parse_command
from bot.commands.private_answers import answer_command
from bot.conversation import ChatAddress, IncomingMessage
from tests.fakes.channel import RecordingChannel

GROUP = ChatAddress("test", "-100")


async def secret(call) -> str:
    return "Your PIN is 4512."


def registry() -> CommandRegistry:
    commands = CommandRegistry()
    commands.register(Command("memory", "what I remember", secret, private_in_groups=True))
    commands.register(Command("help", "list the commands", secret))
    return commands


async def asked(text: str, channel: RecordingChannel, in_group: bool = True) -> list[str]:
    where = GROUP if in_group else ChatAddress("test", "7")
    call = parse_command(IncomingMessage(where, "7", text, in_group=in_group))
    assert call is not None
    commands = registry()
    await answer_command(commands, call, await commands.run(call), channel)
    return channel.texts()


async def test_a_channel_that_cannot_write_privately_asks_for_a_private_chat_instead():
    said = await asked("/memory", RecordingChannel())
    assert said == ["I answer /memory only in a private chat with me: please ask me there."]


async def test_other_commands_and_private_chats_are_answered_where_asked():
    assert await asked("/help", RecordingChannel()) == ["Your PIN is 4512."]
    assert await asked("/memory", RecordingChannel(), in_group=False) == ["Your PIN is 4512."]
