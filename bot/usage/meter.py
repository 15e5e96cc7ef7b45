"""Work other than the bot's own LLM calls, counted against the user who caused it: speech to
text (a voice note heard) and documents filed into LightRAG (whose model reads every piece).

Each is a line of its own in the user's usage, under a name of its own, and counts towards the
daily budget like LLM tokens (`docs/CONFIGURATION.md`, "Usage"): a second of audio as
`TOKENS_PER_AUDIO_SECOND` tokens, a document's text at about four characters a token. A user
at the budget has no voice note transcribed and no document read.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from bot.config.model import UsageConfig
from bot.conversation.messages import CHARS_PER_TOKEN
from bot.ports.llm import TokenUsage
from bot.usage.ledger import UsageRecords
from bot.usage.metered import budget_refusal

TOKENS_PER_AUDIO_SECOND = 10
"""About what speech models bill for audio in (600 tokens a minute, as OpenAI counts it)."""
INDEXING = "LightRAG indexing"
"""The usage line of documents filed into long-term memory."""


def speech_line(model: str) -> str:
    """The usage line of transcriptions by `model`: `whisper-1 (speech to text)`."""
    return f"{model} (speech to text)"


class UsageMeter:
    """Budget check before, usage recorded after, for transcription and document filing."""

    def __init__(self, ledger: UsageRecords, config: Callable[[], UsageConfig]) -> None:
        self._ledger = ledger
        self._config = config

    async def refusal(self, who: str) -> str | None:
        """What to tell `who` at their daily budget; None while they are under it."""
        return budget_refusal(await self._ledger.today(who), self._config())

    def transcribed(self, who: str, model: str, seconds: float) -> None:
        """`seconds` of audio heard for `who` by `model`, whatever came of it."""
        tokens = math.ceil(max(seconds, 0.0) * TOKENS_PER_AUDIO_SECOND)
        self._ledger.record(who, speech_line(model), TokenUsage(tokens, 0))

    def indexed(self, who: str, characters: int) -> None:
        """A document of `characters` filed into long-term memory for `who`."""
        self._ledger.record(who, INDEXING, TokenUsage(characters // CHARS_PER_TOKEN + 1, 0))
