"""The draft stream alone: failures cost drafts, never the answer."""

import asyncio

from bot.adapters.telegram.delivery import DraftsUnavailable
from bot.adapters.telegram.drafts import MAX_DRAFT_FAILURES, DraftPace, TelegramDraftStream
from bot.conversation import ChatAddress
from bot.ports.channel import DeliveryFailed
from tests.fakes.channel import RecordingStream

ADDRESS = ChatAddress("telegram", "42")


class Sender:
    """Records drafts and messages; drafts fail with `draft_error` when set."""

    def __init__(self, draft_error=None, fail_parts=()):
        self.drafts: list[str] = []
        self.sent: list[str] = []
        self.draft_error = draft_error
        self.fail_parts = set(fail_parts)
        self.drafted = asyncio.Event()

    async def draft(self, address, draft_id, part):
        self.drafted.set()
        if self.draft_error is not None:
            raise self.draft_error
        self.drafts.append(part.text)

    async def send(self, address, part, reply_to=None, preview=False):
        if len(self.sent) in self.fail_parts:
            self.sent.append("<lost>")
            raise DeliveryFailed("no")
        self.sent.append(part.text)
        return len(self.sent)

    def paused_for(self, address):
        return 0.0


async def test_failing_drafts_never_cost_the_answer_which_is_sent_once():
    sender = Sender(draft_error=DeliveryFailed("flaky"))
    stream = TelegramDraftStream(
        sender, ADDRESS, fallback=RecordingStream, pace=DraftPace(interval_seconds=0)
    )
    for n in range(MAX_DRAFT_FAILURES + 2):
        await stream.update(f"text {n}")
        await asyncio.sleep(0)
    await stream.finish("the answer")
    assert sender.sent == ["the answer"]


async def test_a_server_without_drafts_hands_over_to_the_edited_preview():
    sender = Sender(draft_error=DraftsUnavailable("404"))
    edits = RecordingStream()
    refused = []
    stream = TelegramDraftStream(
        sender, ADDRESS, fallback=lambda: edits, on_unavailable=refused.append
    )
    await stream.update("first words")
    await sender.drafted.wait()
    await stream.update("first words and more")
    await stream.finish("the answer")
    assert len(refused) == 1 and edits.updates[-1] == "first words and more"
    assert edits.final == "the answer" and sender.sent == []


async def test_a_lost_later_part_is_logged_not_raised(caplog):
    sender = Sender(fail_parts={1})
    stream = TelegramDraftStream(sender, ADDRESS, fallback=RecordingStream)
    await stream.finish("a" * 5000)  # two parts
    assert sender.sent[0].startswith("a") and sender.sent[1] == "<lost>"
    assert any("part 2" in r.getMessage() for r in caplog.records)
