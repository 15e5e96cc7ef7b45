"""Reading files fairly: one sender holds at most one reading slot, and a file that costs
more CPU than `media.readCpuSeconds` is refused with a clear message."""

from __future__ import annotations

import asyncio

import pytest

from bot.config.model import MediaConfig
from bot.media.extraction import UnreadableFile
from bot.media.kinds import FileKind
from bot.media.reader import MediaReader
from tests.fakes.files import costly_pdf


class HeldProcess:
    """Two slots, like the real reader; each read is held until the test lets it go."""

    def __init__(self) -> None:
        self.slots = asyncio.Semaphore(2)
        self.running: list[bytes] = []
        self.release: dict[bytes, asyncio.Event] = {}
        self.changed = asyncio.Condition()

    async def run_bytes(self, data, args=None, limit_seconds=None) -> bytes:
        async with self.slots:
            async with self.changed:
                self.running.append(data)
                self.changed.notify_all()
            await self.release.setdefault(data, asyncio.Event()).wait()
            self.running.remove(data)
        return b'{"text": "read", "pages": null, "pages_read": null, "truncated": false}'


async def started(process: HeldProcess, *files: bytes) -> None:
    async with process.changed:
        await process.changed.wait_for(lambda: all(f in process.running for f in files))


async def test_one_sender_holds_one_slot_while_another_senders_file_is_read():
    process = HeldProcess()
    reader = MediaReader(process=process)
    read = lambda data, who: reader.read_document(data, FileKind.TEXT, MediaConfig(), who)  # noqa: E731
    first = asyncio.create_task(read(b"alice 1", "alice"))
    second = asyncio.create_task(read(b"alice 2", "alice"))
    await started(process, b"alice 1")
    bobs = asyncio.create_task(read(b"bob 1", "bob"))
    await started(process, b"bob 1")  # alice's second file waits for her first, not bob
    assert process.running == [b"alice 1", b"bob 1"]
    process.release.setdefault(b"bob 1", asyncio.Event()).set()
    assert (await bobs).text == "read"
    process.release[b"alice 1"].set()
    await started(process, b"alice 2")
    process.release[b"alice 2"].set()
    assert [(await t).text for t in (first, second)] == ["read", "read"]


async def test_a_file_that_costs_too_much_cpu_is_refused_clearly():
    limits = MediaConfig(readCpuSeconds=1, readTimeoutSeconds=60)
    with pytest.raises(UnreadableFile) as refused:
        await MediaReader().read_document(costly_pdf(), FileKind.PDF, limits, "alice")
    assert "too much work to read" in str(refused.value) and "Nothing was stored" in str(
        refused.value
    )
    assert "media.readCpuSeconds" in str(refused.value)  # its CPU time, not the wall clock
