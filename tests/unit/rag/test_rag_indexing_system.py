import logging
from datetime import UTC, datetime

from bot.config import RuntimeConfig
from bot.conversation import ChatAddress, IncomingMessage, Session
from bot.pipeline import TurnContext
from bot.pipeline.rag_indexing import RagIndexingSystem
from bot.rag.documents import owner_tag_of
from tests.fakes.channel import RecordingChannel
from tests.fakes.rag import RecordingQueue

AT = datetime(2026, 2, 7, 14, 30, tzinfo=UTC)


def ctx(text, answer, *, enabled=True, remembering=True):
    message = IncomingMessage(ChatAddress("telegram", "555"), "42", text, received_at=AT)
    config = RuntimeConfig.model_validate({"rag": {"enabled": enabled}})
    context = TurnContext(message, Session(key="telegram:555"), config, RecordingChannel())
    context.final_text, context.remembering = answer, remembering
    return context


async def run(context):
    queue = RecordingQueue()
    system = RagIndexingSystem(queue)
    if system.should_process(context):
        await system.process(context)
    return queue.documents


async def test_an_exchange_is_queued_in_the_spec_format_and_tagged_with_its_owner():
    [document] = await run(ctx("How do I add a healthcheck?", "Use a healthcheck: block."))
    assert document.text == (
        "Date: 2026-02-07 14:30\nUser: How do I add a healthcheck?\n"
        "Assistant: Use a healthcheck: block."
    )
    assert owner_tag_of(document.file_source) == "42"
    assert document.chat_key == "telegram:555"


async def test_trivial_exchanges_are_not_queued(caplog):
    caplog.set_level(logging.INFO)
    assert await run(ctx("thanks!", "You're welcome, happy to help any time you need.")) == []
    assert "[RagIndexing] Skipping trivial exchange" in caplog.text


async def test_nothing_is_queued_when_rag_is_off_remembering_is_off_or_there_is_no_answer():
    exchange = ("How do I add a healthcheck?", "Use a healthcheck: block in compose.")
    assert await run(ctx(*exchange, enabled=False)) == []
    assert await run(ctx(*exchange, remembering=False)) == []
    assert await run(ctx(exchange[0], None)) == []
