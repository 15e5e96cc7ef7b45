"""The typing indicator alone: shown once a turn takes noticeable time, never for a quick one."""

import asyncio

from bot.adapters.telegram.typing_indicator import TypingIndicators
from bot.conversation import ChatAddress

QUICK = ChatAddress("telegram", "1")
SLOW = ChatAddress("telegram", "2")


class Sender:
    """Records each chat action, and wakes whoever waits for one in a given chat."""

    def __init__(self):
        self.actions: list[str] = []
        self.arrived: dict[str, asyncio.Event] = {}

    async def typing(self, address, action="typing"):
        self.actions.append(address.chat_id)
        self.arrived.setdefault(address.chat_id, asyncio.Event()).set()

    async def first_action_in(self, address):
        await asyncio.wait_for(self.arrived.setdefault(address.chat_id, asyncio.Event()).wait(), 5)


async def test_a_reply_within_the_delay_sends_no_typing():
    sender = Sender()
    typing = TypingIndicators(sender, interval_seconds=60, delay_seconds=0.05)
    typing.start(QUICK)
    typing.start(SLOW)  # started after QUICK, so its timer fires after QUICK's would have
    typing.stop(QUICK)  # the quick chat's reply went out at once
    await sender.first_action_in(SLOW)
    assert sender.actions == ["2"]
    typing.stop(SLOW)


async def test_a_slow_turn_shows_typing_and_refreshes_it_until_stopped():
    sender = Sender()
    typing = TypingIndicators(sender, interval_seconds=0.01, delay_seconds=0.01)
    typing.start(SLOW)
    typing.start(SLOW)  # a second start while it runs changes nothing
    await sender.first_action_in(SLOW)
    while len(sender.actions) < 3:
        sender.arrived["2"].clear()
        await sender.first_action_in(SLOW)
    typing.stop(SLOW)
    shown = len(sender.actions)
    typing.start(QUICK)  # proves the stopped loop is over: QUICK's first action comes later
    await sender.first_action_in(QUICK)
    assert sender.actions[:shown] == ["2"] * shown and sender.actions[shown:] == ["1"]
    typing.stop(QUICK)
