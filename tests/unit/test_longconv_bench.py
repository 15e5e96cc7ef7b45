"""The long-conversation benchmark tells a conversation as its user would: each session at its
own date, each message answered with the data's reply, and reads back `# Memory` per question."""

from datetime import UTC, datetime

from bench.eval_app import eval_app
from bench.longconv_data import Conversation, Message, Question, Session
from bench.memory_longconv import Clock, PlannedReplies, ask, tell

MARCH = datetime(2025, 3, 9, 19, 0, tzinfo=UTC)
JUNE = datetime(2025, 6, 22, 10, 0, tzinfo=UTC)
CONVERSATION = Conversation(
    "ana",
    "dev",
    "ana",
    (
        Session(
            "ana-s01",
            MARCH,
            (
                Message("m1", "user", "Remember that my sister Leila lives in Porto."),
                Message("m2", "assistant", "Porto is lovely, noted!"),
            ),
        ),
        Session(
            "ana-s02",
            JUNE,
            (
                Message("m3", "user", "Remember that my cat Miso is three years old."),
                Message("m4", "assistant", "Miso sounds great."),
            ),
        ),
    ),
    (Question("q1", "single", "Where does my sister live?", ("m1",), ("Porto",)),),
)


async def test_each_session_is_told_at_its_date_with_the_datas_replies(tmp_path):
    clock, llm = Clock(MARCH), PlannedReplies()
    app = eval_app(tmp_path, llm, provider="off", clock=clock)
    try:
        await tell(app, llm, clock, CONVERSATION)
        stored = await app.memory.live_items("ana")
        contexts = await ask(app, llm, clock, CONVERSATION)
    finally:
        await app.aclose()

    dated = {item.content: item.created_at.date() for item in stored}
    assert any("Porto" in text and day == MARCH.date() for text, day in dated.items())
    assert any("Miso" in text and day == JUNE.date() for text, day in dated.items())
    assert (
        "User: Remember that my cat Miso is three years old. → Assistant: Miso sounds great."
        in dated
    )
    assert any("Porto" in line for line in contexts[0].lines), "read back from # Memory"
