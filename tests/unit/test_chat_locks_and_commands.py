import asyncio

from bot.chat_locks import ChatLocks
from bot.commands import parse_command
from bot.conversation import ChatAddress, IncomingMessage


async def test_one_chat_runs_in_arrival_order_and_chats_run_concurrently():
    locks = ChatLocks()
    events = []

    async def turn(chat, n, seconds):
        async with locks.hold(chat):
            events.append(("start", chat, n))
            await asyncio.sleep(seconds)
            events.append(("end", chat, n))

    tasks = [asyncio.create_task(turn("a", i, 0.05)) for i in range(3)]
    tasks.append(asyncio.create_task(turn("b", 0, 0.01)))
    await asyncio.gather(*tasks)
    a_events = [e for e in events if e[1] == "a"]
    assert a_events == [(kind, "a", n) for n in range(3) for kind in ("start", "end")]
    assert events.index(("end", "b", 0)) < events.index(("end", "a", 0))
    assert len(locks) == 0, "locks of idle chats are dropped"


def message(text):
    return IncomingMessage(ChatAddress("t", "1"), "u", text)


def test_commands_are_parsed_with_bot_names_and_arguments():
    call = parse_command(message("/Forget@MyBot 42 extra"))
    assert (call.name, call.bot_username, call.args) == ("forget", "MyBot", "42 extra")
    assert parse_command(message("/new")).args == ""
    assert parse_command(message("hello /new")) is None
    assert parse_command(message("/")) is None
