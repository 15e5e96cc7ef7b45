import logging

import pytest

from bot.chat_locks import ChatLanes
from bot.commands import CommandRegistry
from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.conversation import ChatAddress, IncomingMessage, Session
from bot.i18n.catalogue.notices import no_answer
from bot.pipeline import DuplicateOrderError, Pipeline, TurnContext
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.storage.sessions import JsonSessionStore
from bot.turns import TurnRunner
from tests.fakes.channel import RecordingChannel

ADDRESS = ChatAddress("test", "1")


class Recorder:
    def __init__(self, name, order, log, fail=False, skip=False):
        self.name, self.order, self._log, self._fail, self._skip = name, order, log, fail, skip

    def should_process(self, ctx):
        return not self._skip

    async def process(self, ctx):
        self._log.append(self.name)
        if self._fail:
            raise RuntimeError(f"{self.name} broke")


class Answer:
    name, order = "Answer", 30

    def should_process(self, ctx):
        return True

    async def process(self, ctx):
        ctx.final_text = "the answer"


def make_ctx(channel=None):
    message = IncomingMessage(ADDRESS, "u1", "hello there")
    channel = channel or RecordingChannel()
    return TurnContext(message, Session(key="test:1"), RuntimeConfig(), channel)


async def test_systems_run_in_ascending_order():
    ran = []
    pipeline = Pipeline([Recorder("c", 60, ran), Recorder("a", 20, ran), Recorder("b", 30, ran)])
    await pipeline.run(make_ctx())
    assert ran == ["a", "b", "c"]


def test_duplicate_orders_are_refused_at_start():
    with pytest.raises(DuplicateOrderError, match="'x' and 'y' both have order 50"):
        Pipeline([Recorder("x", 50, []), Recorder("y", 50, [])])


async def test_should_process_false_skips_the_system():
    ran = []
    await Pipeline([Recorder("a", 1, ran, skip=True), Recorder("b", 2, ran)]).run(make_ctx())
    assert ran == ["b"]


async def test_a_failing_system_is_recorded_and_the_next_still_runs(caplog):
    ran = []
    pipeline = Pipeline([Recorder("a", 1, ran, fail=True), Recorder("b", 2, ran)])
    ctx = make_ctx()
    with caplog.at_level(logging.ERROR):
        await pipeline.run(ctx)
    assert ran == ["a", "b"]
    assert [f.system for f in ctx.failures] == ["a"]
    assert "a broke" in ctx.failures[0].error
    assert any("[Pipeline] a failed" in r.getMessage() for r in caplog.records)


async def test_per_system_duration_is_logged_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger="bot.pipeline.pipeline"):
        await Pipeline([Recorder("timed", 1, [])]).run(make_ctx())
    assert any("[Pipeline] timed took" in r.getMessage() for r in caplog.records)


def runner_for(tmp_path, systems):
    sessions = JsonSessionStore(tmp_path / "sessions")
    config = RuntimeConfigStore(tmp_path / "missing.json")
    return TurnRunner(Pipeline(systems), sessions, config, CommandRegistry(), ChatLanes()), sessions


async def test_user_gets_an_honest_reply_when_no_system_answers(tmp_path):
    channel = RecordingChannel()
    runner, _ = runner_for(tmp_path, [Recorder("broken", 30, [], fail=True)])
    await runner.handle(IncomingMessage(ADDRESS, "u1", "hi"), channel)
    assert channel.texts() == [no_answer()]


async def test_reply_still_arrives_when_routing_itself_fails(tmp_path):
    channel = RecordingChannel(fail_sends=1)
    runner, _ = runner_for(tmp_path, [Answer(), ResponseRoutingSystem()])
    await runner.handle(IncomingMessage(ADDRESS, "u1", "hi"), channel)
    assert channel.texts() == ["the answer"]


async def test_session_with_the_users_message_is_saved_even_when_a_system_failed(tmp_path):
    channel = RecordingChannel()
    systems = [Recorder("broken", 30, [], fail=True), ResponseRoutingSystem()]
    runner, _ = runner_for(tmp_path, systems)
    await runner.handle(IncomingMessage(ADDRESS, "u1", "remember me"), channel)
    on_disk = await JsonSessionStore(tmp_path / "sessions").load("test:1")
    assert [(m.role, m.content) for m in on_disk.messages] == [("user", "remember me")]


class StreamThenFail:
    name, order = "StreamThenFail", 30

    def should_process(self, ctx):
        return True

    async def process(self, ctx):
        await ctx.stream.update("half an ans")
        raise RuntimeError("the model broke off")


async def test_the_reply_guarantee_finishes_a_half_streamed_message(tmp_path):
    channel = RecordingChannel(streaming=True)
    runner, _ = runner_for(tmp_path, [StreamThenFail()])  # no routing: the guarantee acts
    await runner.handle(IncomingMessage(ADDRESS, "u1", "hi"), channel)
    (stream,) = channel.streams
    assert stream.updates == ["half an ans"]
    assert stream.final == no_answer(), "the preview is replaced, not left half-written"
    assert channel.texts() == []
