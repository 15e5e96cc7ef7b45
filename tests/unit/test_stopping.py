"""`/stop`: command lanes that never wait behind a turn, and a stopped turn left whole."""

import asyncio

import pytest

from bot.chat_locks import ChatLanes
from bot.commands import CommandRegistry, CoreCommands
from bot.config import RuntimeConfigStore
from bot.conversation import ChatAddress, IncomingMessage, ToolCall
from bot.i18n.catalogue.notices import stopped_note
from bot.pipeline import Pipeline
from bot.pipeline.response_routing import ResponseRoutingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.ports.llm import LlmResponse
from bot.running_turns import RunningTurns, TurnStopped
from bot.storage.sessions import JsonSessionStore
from bot.tools import ToolRegistry, builtin_tools
from bot.turns import TurnRunner
from tests.fakes.channel import RecordingChannel
from tests.fakes.llm import ScriptedLlm
from tests.unit.test_tool_loop import SlowArgs

ADDRESS = ChatAddress("test", "1")


class ParkedTool:
    """A tool that runs until cancelled, and says when it has started."""

    name = "slow"
    description = "waits"
    arguments = SlowArgs

    def __init__(self):
        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, args, context):
        self.started.set()
        try:
            await asyncio.sleep(args.seconds)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "done"


async def test_a_command_runs_while_a_turn_holds_the_chat_and_a_later_message_waits_for_it():
    lanes, events = ChatLanes(), []
    turn_may_end, command_may_end = asyncio.Event(), asyncio.Event()

    async def turn(name, until=None):
        async with lanes.turn("chat"):
            events.append(f"{name} starts")
            if until is not None:
                await until.wait()
            events.append(f"{name} ends")

    async def command():
        async with lanes.command("chat"):
            events.append("command starts")
            await command_may_end.wait()
            events.append("command ends")

    first = asyncio.create_task(turn("first", turn_may_end))
    await asyncio.sleep(0)
    commanding = asyncio.create_task(command())
    later = asyncio.create_task(turn("later"))
    await asyncio.sleep(0.01)
    assert events == ["first starts", "command starts"], "the command did not wait"
    turn_may_end.set()
    await first
    await asyncio.sleep(0.01)
    assert "later starts" not in events, "a message waits for the command sent before it"
    command_may_end.set()
    await asyncio.gather(commanding, later)
    assert events[-3:] == ["command ends", "later starts", "later ends"]
    assert len(lanes) == 0, "lanes of idle chats are dropped"


async def test_a_stop_is_told_apart_from_a_shutdown():
    running = RunningTurns()
    started = asyncio.Event()

    async def pipeline():
        started.set()
        await asyncio.sleep(30)

    async def turn():
        async with running.turn("chat", "u1"):
            await running.run("chat", pipeline())

    stopped = asyncio.create_task(turn())
    await started.wait()
    assert await running.stop("chat") is True
    with pytest.raises(TurnStopped):
        await stopped
    assert await running.stop("chat") is False, "nothing runs any more"

    started.clear()
    shut_down = asyncio.create_task(turn())
    await started.wait()
    shut_down.cancel()
    with pytest.raises(asyncio.CancelledError):
        await shut_down


async def test_a_turn_stopped_in_a_tool_call_keeps_the_text_shown_and_no_half_tool_call(
    tmp_path,
):
    tool_call = ToolCall(id="c0", name="slow", arguments='{"seconds": 30}')
    llm = ScriptedLlm(LlmResponse(text="Let me check that.", tool_calls=[tool_call]))
    parked = ParkedTool()
    tools = ToolRegistry([*builtin_tools(), parked])
    pipeline = Pipeline([ToolLoopSystem(llm, tools), ResponseRoutingSystem()])
    sessions = JsonSessionStore(tmp_path / "sessions")
    config = RuntimeConfigStore(tmp_path / "runtime-config.json")
    running = RunningTurns()
    commands = CommandRegistry()
    CoreCommands(commands, sessions, config, tools, "local", turns=running).register()
    runner = TurnRunner(pipeline, sessions, config, commands, running=running)
    channel = RecordingChannel(streaming=True)

    turn = asyncio.create_task(runner.handle(IncomingMessage(ADDRESS, "u1", "check"), channel))
    await parked.started.wait()
    await runner.handle(IncomingMessage(ADDRESS, "u1", "/stop"), channel)
    await turn

    assert parked.cancelled, "the running tool was cancelled"
    assert channel.streams[0].final == f"Let me check that.\n\n{stopped_note()}"
    assert channel.texts()[0].startswith("Stopped.")
    session = await JsonSessionStore(tmp_path / "sessions").load(ADDRESS.session_key)
    assert [(m.role, m.content, m.tool_calls) for m in session.messages] == [
        ("user", "check", []),
        ("assistant", f"Let me check that.\n\n{stopped_note()}", []),
    ]
