"""The usage ledger's gate: a read never overlaps this process's own write, so a row in
flight is counted once (in the table or still waiting), and a waiting write goes first."""

from __future__ import annotations

import asyncio

from bot.adapters.postgres.usage import ReadWriteGate


class Log:
    """What entered and left the gate, in order; each holder leaves when told to."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.entered: dict[str, asyncio.Event] = {}
        self.leave: dict[str, asyncio.Event] = {}

    def hold(self, name: str, part) -> asyncio.Task[None]:
        self.entered[name], self.leave[name] = asyncio.Event(), asyncio.Event()

        async def holding() -> None:
            async with part():
                self.events.append(f"{name} in")
                self.entered[name].set()
                await self.leave[name].wait()
                self.events.append(f"{name} out")

        return asyncio.create_task(holding())


async def test_a_read_waits_for_the_write_in_flight_and_reads_share():
    gate, log = ReadWriteGate(), Log()
    tasks = [log.hold("write", gate.writing)]
    await log.entered["write"].wait()
    tasks += [log.hold("read 1", gate.reading), log.hold("read 2", gate.reading)]
    log.leave["write"].set()
    await asyncio.gather(log.entered["read 1"].wait(), log.entered["read 2"].wait())
    assert log.events == ["write in", "write out", "read 1 in", "read 2 in"], "reads share"
    log.leave["read 1"].set(), log.leave["read 2"].set()
    await asyncio.gather(*tasks)


async def test_a_waiting_write_goes_before_new_reads():
    gate, log = ReadWriteGate(), Log()
    tasks = [log.hold("read 1", gate.reading)]
    await log.entered["read 1"].wait()
    tasks += [log.hold("write", gate.writing), log.hold("read 2", gate.reading)]
    log.leave["read 1"].set()
    await log.entered["write"].wait()
    log.leave["write"].set()
    await log.entered["read 2"].wait()
    assert log.events == ["read 1 in", "read 1 out", "write in", "write out", "read 2 in"]
    log.leave["read 2"].set()
    await asyncio.gather(*tasks)
