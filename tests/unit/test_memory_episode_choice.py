"""Which past exchanges make `# Memory`: ranked among themselves by meaning and words fused,
not by score, and a short one counting less by meaning once it is not among the nearest.
Through the real service, with an embedder that puts each text at a chosen cosine from the
question."""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from bot.config.model import MemoryConfig
from bot.memory.exchange_ranking import SHORT_FROM
from bot.memory.file_repository import file_memory
from bot.memory.service import MemoryService
from bot.ports.embeddings import Vectors

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
QUESTION = "what should I know about these things?"


class PlacedEmbedder:
    """The question is one direction; each known text sits at its given cosine from it, and
    every text is orthogonal to every other apart from that: the meaning ranking is exactly
    the order of the cosines given."""

    model_id = "fake:placed"

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines
        self.dimensions = len(cosines) + 8
        self.others: dict[str, int] = {}

    async def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            if text == QUESTION:
                rows[row, 0] = 1.0
                continue
            own = 1 + self.others.setdefault(text, len(self.others))
            cosine = self.cosines.get(text, 0.0)
            rows[row, 0], rows[row, own] = cosine, np.sqrt(1 - cosine**2)
        return rows


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def told(tmp_path, cosines: dict[str, float], clock: Clock, **config) -> MemoryService:
    """A memory told every text of `cosines` in its order (as the user's words of an
    exchange), its vectors made."""
    memory = file_memory(
        tmp_path / "memory",
        lambda: MemoryConfig(**config),
        clock,
        embedder=PlacedEmbedder(cosines),
    )
    for at, words in enumerate(cosines):
        await memory.remember_exchange("u", words, "Thanks for telling me, noted.", f"turn:{at}")
    await memory.recall("u", "warm up")  # opens the user's vectors, embeds what is stored
    await memory.drain()
    return memory


async def test_an_older_message_nearer_in_meaning_keeps_its_place_over_fresh_chatter(tmp_path):
    """By score, a line said today would win on recency; the exchange the question is nearer
    to wins the one place instead."""
    clock = Clock(NOW - timedelta(days=300))
    memory = file_memory(
        tmp_path / "memory",
        lambda: MemoryConfig(episodic_top_k=1),
        clock,
        embedder=PlacedEmbedder(
            {
                "we adopted a grey rescue cat called Miso from the shelter": 0.9,
                "the pizza place down the road was decent, nothing special": 0.85,
            }
        ),
    )
    await memory.remember_exchange(
        "u", "we adopted a grey rescue cat called Miso from the shelter", "Lovely!", "turn:1"
    )
    clock.now = NOW
    await memory.remember_exchange(
        "u", "the pizza place down the road was decent, nothing special", "Nice.", "turn:2"
    )
    await memory.recall("u", "warm up")
    await memory.drain()

    recalled = await memory.recall("u", QUESTION)

    assert "Miso" in recalled
    assert "pizza" not in recalled


async def test_a_short_message_counts_less_by_meaning_past_the_nearest(tmp_path):
    nearest = {
        f"long message number {at} about the garden shed roof and the gutters": 0.95 - at / 100
        for at in range(SHORT_FROM)
    }
    cosines = {
        **nearest,
        "ramen at lunch": 0.84,  # ninth by meaning, two content words
        "Tom signed a new contract with a games studio in Montreal": 0.83,  # tenth
    }
    memory = await told(tmp_path, cosines, Clock(NOW), episodic_top_k=SHORT_FROM + 1)

    recalled = await memory.recall("u", QUESTION)

    assert "Montreal" in recalled
    assert "ramen" not in recalled
    assert all(words in recalled for words in nearest)


async def test_a_short_message_among_the_nearest_counts_fully(tmp_path):
    """ "I can't have gluten, celiac" is short and may be what the question is about."""
    cosines = {
        "oh and I can't have gluten, celiac": 0.95,
        **{
            f"long message number {at} about the garden shed roof and the gutters": 0.9 - at / 100
            for at in range(SHORT_FROM)
        },
    }
    memory = await told(tmp_path, cosines, Clock(NOW), episodic_top_k=1)

    assert "gluten" in await memory.recall("u", QUESTION)


async def test_when_the_budget_is_short_the_nearer_message_takes_the_room_not_the_fresher(
    tmp_path,
):
    """Both exchanges make the top-k, but `# Memory` has room for one: the place goes by the
    exchanges' own ranking, not by a score that recency tips towards today's chatter."""
    cat = "we adopted a grey rescue cat called Miso from the shelter, she is three and bossy"
    pizza = (
        "the pizza place down the road was decent, nothing special, the crust was soggy and cold,"
        " and the waiter forgot our drinks twice"
    )
    clock = Clock(NOW - timedelta(days=300))
    memory = file_memory(
        tmp_path / "memory",
        lambda: MemoryConfig(
            episodic_top_k=2, soft_budget_tokens=50, hard_budget_tokens=50, overflow_min_score=1.0
        ),
        clock,
        embedder=PlacedEmbedder({cat: 0.9, pizza: 0.85}),
    )
    await memory.remember_exchange("u", cat, "Lovely!", "turn:1")
    clock.now = NOW
    await memory.remember_exchange("u", pizza, "Nice.", "turn:2")
    await memory.recall("u", "warm up")
    await memory.drain()

    recalled = await memory.recall("u", QUESTION)

    assert "Miso" in recalled
    assert "pizza" not in recalled
