"""A channel that records what the bot sent, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.conversation import ChatAddress
from bot.ports.channel import ReplyStream


@dataclass
class RecordingStream:
    updates: list[str] = field(default_factory=list)
    final: str | None = None

    async def update(self, text: str) -> None:
        self.updates.append(text)

    async def finish(self, text: str) -> None:
        self.final = text


@dataclass
class RecordingChannel:
    """Keeps every reply per chat; optionally streams, optionally fails to send."""

    name: str = "test"
    streaming: bool = False
    fail_sends: int = 0
    sent: list[tuple[ChatAddress, str]] = field(default_factory=list)
    streams: list[RecordingStream] = field(default_factory=list)

    async def send(self, address: ChatAddress, text: str) -> None:
        if self.fail_sends > 0:
            self.fail_sends -= 1
            raise ConnectionError("channel down")
        self.sent.append((address, text))

    def open_stream(self, address: ChatAddress) -> ReplyStream | None:
        if not self.streaming:
            return None
        stream = RecordingStream()
        self.streams.append(stream)
        return stream

    def texts(self, chat_id: str | None = None) -> list[str]:
        return [t for a, t in self.sent if chat_id is None or a.chat_id == chat_id]
