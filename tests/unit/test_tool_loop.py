import asyncio
import json

import pytest
from pydantic import BaseModel

from bot.config import RuntimeConfig
from bot.conversation import ChatAddress, ChatMessage, IncomingMessage, Session, ToolCall
from bot.pipeline import TurnContext
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.llm import LlmResponse
from bot.tools import ToolRegistry, builtin_tools
from tests.fakes.channel import RecordingChannel
from tests.fakes.llm import (
    ScriptedLlm,
    calls,
    context_overflow,
    empty_answer,
    llm_down,
    text,
)


class SlowArgs(BaseModel):
    seconds: float = 1.0


class SlowTool:
    name = "slow"
    description = "sleeps"
    arguments = SlowArgs

    def __init__(self):
        self.running = 0
        self.peak = 0

    async def run(self, args, context):
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(args.seconds)
        self.running -= 1
        return "slept"


class BoomTool:
    name = "boom"
    description = "raises"
    arguments = SlowArgs

    async def run(self, args, context):
        raise RuntimeError("kaboom")


class FileTool:
    """Fails the way a tool keeping data on disk does: an OSError naming the server's path."""

    name = "files"
    description = "reads a data file"
    arguments = SlowArgs

    def __init__(self, folder):
        self.folder = folder

    async def run(self, args, context):
        if args.seconds:
            return (self.folder / "memory" / "u-1" / "semantic.jsonl").read_text()
        raise RuntimeError(f"cannot write {self.folder}/my data/notes.jsonl: disk full")


class LongTool:
    name = "long"
    description = "returns a lot"
    arguments = SlowArgs

    async def run(self, args, context):
        return "z" * 50_000


def make_ctx(llm_config=None, tools=None, streaming=False):
    config = RuntimeConfig.model_validate({"llm": llm_config or {}, "tools": tools or {}})
    session = Session(key="test:1", messages=[ChatMessage.user("what is 6*7?")])
    channel = RecordingChannel(streaming=streaming)
    message = IncomingMessage(ChatAddress("test", "1"), "u1", "what is 6*7?")
    stream = channel.open_stream(message.address)
    return TurnContext(message, session, config, channel, stream=stream)


def loop_with(llm, *extra_tools):
    return ToolLoopSystem(llm, ToolRegistry([*builtin_tools(), *extra_tools]))


def tool_results(ctx):
    return [m.content for m in ctx.turn_messages if m.role == "tool"]


async def test_tool_call_round_trip():
    llm = ScriptedLlm(calls(("calculator", '{"expression": "6*7"}')), text("It is 42."))
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert ctx.final_text == "It is 42."
    assert [m.role for m in ctx.turn_messages] == ["assistant", "tool", "assistant"]
    assert tool_results(ctx) == ["6*7 = 42"]
    second = llm.requests[1].messages
    assert second[-1].role == "tool" and second[-1].tool_call_id == "c0"
    assert second[0].role == "system"
    assert {t.name for t in llm.requests[0].tools} == {"calculator", "current_time"}


async def test_unknown_tool_becomes_an_error_result_and_the_loop_continues():
    llm = ScriptedLlm(calls(("teleport", "{}")), text("Sorry, I cannot."))
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert ctx.final_text == "Sorry, I cannot."
    assert tool_results(ctx)[0].startswith("Error: unknown tool 'teleport'")


async def test_invalid_json_arguments_become_an_error_result():
    llm = ScriptedLlm(calls(("calculator", '{"expression": "1+')), text("retrying failed"))
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert "not valid JSON" in tool_results(ctx)[0]
    assert ctx.final_text == "retrying failed"


async def test_arguments_of_the_wrong_shape_become_an_error_result():
    llm = ScriptedLlm(calls(("calculator", '{"expr": "1"}')), text("ok"))
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert "invalid arguments for calculator: expression: Field required" in tool_results(ctx)[0]


async def test_a_tool_exception_becomes_an_error_result():
    llm = ScriptedLlm(calls(("boom", "{}")), text("done"))
    ctx = make_ctx()
    await loop_with(llm, BoomTool()).process(ctx)
    assert tool_results(ctx) == ["Error: boom failed: kaboom"]


async def test_a_tool_bug_is_logged_with_its_traceback_a_refused_input_without(caplog):
    llm = ScriptedLlm(calls(("boom", "{}"), ("calculator", '{"expression": "1/0"}')), text("done"))
    await loop_with(llm, BoomTool()).process(make_ctx())
    logged = {r.getMessage().split(":")[0]: r.exc_info for r in caplog.records}
    assert logged["[Tools] boom failed"], "a bug: where it happened"
    assert not logged["[Tools] calculator failed"], "bad input: one line"


@pytest.mark.parametrize(("seconds", "named"), [(1, "semantic.jsonl"), (0, "notes.jsonl")])
async def test_a_tool_error_shows_no_path_of_the_server(tmp_path, caplog, seconds, named):
    llm = ScriptedLlm(calls(("files", f'{{"seconds": {seconds}}}')), text("done"))
    ctx = make_ctx()
    await loop_with(llm, FileTool(tmp_path)).process(ctx)
    (result,) = tool_results(ctx)
    assert result.startswith("Error: files failed:") and named in result
    assert str(tmp_path) not in result and "/tmp" not in result
    assert "tmp" not in llm.requests[1].messages[-1].content
    assert str(tmp_path) in caplog.text, "the operator's log keeps the whole path"


async def test_a_tool_timeout_becomes_an_error_result():
    llm = ScriptedLlm(calls(("slow", '{"seconds": 5}')), text("done"))
    ctx = make_ctx({"toolTimeoutSeconds": 0.05})
    await loop_with(llm, SlowTool()).process(ctx)
    assert tool_results(ctx) == ["Error: slow timed out after 0.05 seconds."]


async def test_several_tool_calls_run_concurrently():
    slow = SlowTool()
    llm = ScriptedLlm(calls(*[("slow", '{"seconds": 0.2}')] * 3), text("done"))
    ctx = make_ctx()
    await loop_with(llm, slow).process(ctx)
    assert slow.peak == 3
    assert tool_results(ctx) == ["slept"] * 3


async def test_tool_output_is_truncated_to_the_configured_size():
    llm = ScriptedLlm(calls(("long", "{}")), text("done"))
    ctx = make_ctx({"toolOutputMaxChars": 1000})
    await loop_with(llm, LongTool()).process(ctx)
    result = tool_results(ctx)[0]
    assert result.startswith("z" * 1000) and "[truncated 49000 characters]" in result


async def test_disabled_tool_is_neither_offered_nor_run():
    llm = ScriptedLlm(calls(("calculator", '{"expression": "1+1"}')), text("ok"))
    ctx = make_ctx(tools={"calculator": False})
    await loop_with(llm).process(ctx)
    assert [t.name for t in llm.requests[0].tools] == ["current_time"]
    assert tool_results(ctx)[0].startswith("Error: unknown tool 'calculator'")


async def test_iteration_limit_gives_a_clear_message_and_no_half_turn():
    llm = ScriptedLlm(*[calls(("current_time", "{}"))] * 10)
    ctx = make_ctx({"maxToolIterations": 3})
    await loop_with(llm).process(ctx)
    assert len(llm.requests) == 3
    assert ctx.final_text is None
    assert "stopped after 3 model calls" in ctx.notice
    assert ctx.turn_messages == []


async def test_tool_call_limit_gives_a_clear_message():
    llm = ScriptedLlm(calls(*[("current_time", "{}")] * 5))
    ctx = make_ctx({"maxToolCalls": 4})
    await loop_with(llm).process(ctx)
    assert "stopped after 4 tool calls" in ctx.notice
    assert ctx.turn_messages == []


async def test_wall_clock_deadline_gives_a_clear_message():
    llm = ScriptedLlm(5.0, text("too late"))
    ctx = make_ctx({"turnDeadlineSeconds": 0.1})
    await loop_with(llm).process(ctx)
    assert ctx.final_text is None
    assert "couldn't finish within 0.1 seconds" in ctx.notice


async def test_llm_failure_leaves_no_half_written_tool_messages():
    llm = ScriptedLlm(calls(("current_time", "{}")), llm_down())
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert ctx.final_text is None
    assert ctx.notice == "The language model service is failing (HTTP 503)."
    assert ctx.turn_messages == []


async def test_streamed_text_reaches_the_channel_stream():
    llm = ScriptedLlm(text("streamed answer"))
    ctx = make_ctx(streaming=True)
    await loop_with(llm).process(ctx)
    assert ctx.stream.updates == ["streamed answer"]


async def test_request_carries_the_configured_model_and_limits():
    llm = ScriptedLlm(text("ok"))
    ctx = make_ctx({"model": "m-1", "temperature": 0.1, "maxOutputTokens": 77})
    await loop_with(llm).process(ctx)
    request = llm.requests[0]
    assert (request.model, request.temperature, request.max_output_tokens) == ("m-1", 0.1, 77)
    schema = next(t for t in request.tools if t.name == "calculator").parameters
    assert json.dumps(schema)  # a plain JSON schema
    assert schema["required"] == ["expression"]


async def test_an_answer_cut_at_the_limit_says_so_and_runs_no_tool():
    broken = ToolCall(id="c1", name="calculator", arguments='{"expression": "1+')
    llm = ScriptedLlm(LlmResponse("Part one", [broken], truncated=True))
    ctx = make_ctx({"maxOutputChars": 500})
    await loop_with(llm).process(ctx)
    assert ctx.final_text == (
        "Part one\n\n[The answer was cut here: it passed the limit of 500 characters "
        "(llm.maxOutputChars).]"
    )
    assert len(llm.requests) == 1 and llm.requests[0].max_output_chars == 500
    assert [m.role for m in ctx.turn_messages] == ["assistant"]


class FoldingCompactor:
    """Folds every turn but the last into the summary, as `/compact` does, and counts calls."""

    def __init__(self):
        self.calls = 0

    async def compact_now(self, session, limits, billed_to):
        self.calls += 1
        cut = session.cut_for(0, 0)
        if cut:
            session.fold_into_summary(cut, "The user asked many things before.")
        return cut


class RefreshingPrompt:
    """The system prompt as context building renders it: with the session's summary."""

    async def refreshed(self, ctx):
        ctx.system_prompt = f"sys\n# Summary\n{ctx.session.summary}"
        return ctx.system_prompt


def long_chat_ctx(**kwargs):
    ctx = make_ctx(**kwargs)
    older = [ChatMessage.user("earlier question"), ChatMessage.assistant("earlier answer")]
    ctx.session.messages[:0] = older * 3
    return ctx


def compacting_loop(llm, compactor):
    tools = ToolRegistry(builtin_tools())
    return ToolLoopSystem(llm, tools, prompt=RefreshingPrompt(), compactor=compactor)


@pytest.mark.parametrize("failure", [context_overflow, empty_answer])
async def test_a_context_overflow_compacts_the_history_and_asks_once_more(failure):
    compactor = FoldingCompactor()
    llm = ScriptedLlm(failure(), text("It is 42."))
    ctx = long_chat_ctx()
    await compacting_loop(llm, compactor).process(ctx)
    assert ctx.final_text == "It is 42." and compactor.calls == 1
    retried = llm.requests[1].messages
    assert "The user asked many things before." in retried[0].content
    assert [m.content for m in retried[1:]] == ["what is 6*7?"]


async def test_still_too_long_after_compaction_tells_the_user_what_to_do_and_stores_nothing():
    compactor = FoldingCompactor()
    llm = ScriptedLlm(context_overflow(), context_overflow())
    ctx = long_chat_ctx()
    await compacting_loop(llm, compactor).process(ctx)
    assert ctx.final_text is None and ctx.turn_messages == []
    assert "/new" in ctx.notice and compactor.calls == 1 and len(llm.requests) == 2


async def test_an_empty_answer_with_nothing_to_compact_is_a_clear_failure_not_an_answer():
    compactor = FoldingCompactor()
    llm = ScriptedLlm(empty_answer())
    ctx = make_ctx()
    await compacting_loop(llm, compactor).process(ctx)
    assert ctx.final_text is None and ctx.turn_messages == []
    assert ctx.notice == "The language model sent an empty response. Please try again."
    assert len(llm.requests) == 1


async def test_an_overflow_after_a_tool_ran_asks_again_without_running_the_tool_again():
    compactor = FoldingCompactor()
    llm = ScriptedLlm(
        calls(("calculator", '{"expression": "6*7"}')), context_overflow(), text("42")
    )
    ctx = long_chat_ctx()
    await compacting_loop(llm, compactor).process(ctx)
    assert ctx.final_text == "42"
    assert tool_results(ctx) == ["6*7 = 42"]
    assert [m.role for m in llm.requests[2].messages] == ["system", "user", "assistant", "tool"]


async def test_an_answer_cut_by_the_token_limit_ends_with_a_note():
    llm = ScriptedLlm(LlmResponse("The first half of", finish_reason="length"))
    ctx = make_ctx()
    await loop_with(llm).process(ctx)
    assert ctx.final_text.startswith("The first half of\n\n[The answer stopped here")
    assert "llm.maxOutputTokens" in ctx.final_text
