"""What a call that failed costs the user: its prompt when the stream had begun, never its
output."""

import pytest

from bot.config.model import UsageConfig
from bot.conversation import ChatMessage
from bot.ports.llm import LlmError, LlmRequest
from bot.usage.ledger import UsageLedger
from bot.usage.metered import MeteredLlm


class BreaksMidStream:
    """Streams half an answer, then fails as an error event mid-stream does."""

    async def complete(self, request, on_text=None):
        await on_text("half of an answer that never ends")
        raise LlmError("The language model sent an answer I could not read.", "error event")


async def test_an_error_mid_stream_bills_the_prompt_and_no_output(tmp_path):
    ledger = UsageLedger(tmp_path)
    metered = MeteredLlm(BreaksMidStream(), ledger, lambda: UsageConfig())
    request = LlmRequest(
        messages=[ChatMessage.user("tell me a story " * 20)],
        model="m1",
        temperature=0,
        max_output_tokens=10,
        timeout_seconds=5,
        billed_to="alice",
    )

    async def listen(text: str) -> None:
        pass

    with pytest.raises(LlmError):
        await metered.complete(request, listen)
    tally = (await ledger.today("alice"))["m1"]
    assert tally.prompt_tokens > 0 and tally.completion_tokens == 0
