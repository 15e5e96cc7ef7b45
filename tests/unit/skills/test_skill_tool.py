"""The `skill` tool inside a turn, and `/skill`: the chat's skill is kept in its session."""

import json

import pytest

from bot.commands import CommandRegistry, parse_command
from bot.commands.skills import SkillCommands
from bot.config import RuntimeConfig
from bot.conversation import ChatAddress, ChatMessage, IncomingMessage, Session
from bot.pipeline import TurnContext
from bot.pipeline.context_building import ContextBuildingSystem
from bot.pipeline.tool_loop import ToolLoopSystem
from bot.prompts import PromptFiles
from bot.skills import SkillLibrary
from bot.storage.sessions import JsonSessionStore
from bot.tools import ToolRegistry, builtin_tools
from bot.tools.skill import SkillTool
from tests.fakes.channel import RecordingChannel
from tests.fakes.llm import ScriptedLlm, calls, text
from tests.fakes.skills import write_skill

HAIKU = "Count five, seven, five syllables."


@pytest.fixture
def library(tmp_path):
    skills = tmp_path / "skills"
    folder = write_skill(skills, "haiku", "Writes haiku. Use for short poems.", HAIKU)
    (folder / "syllables.md").write_text("Vowel groups count once.")
    recipes = write_skill(
        skills, "recipes", "Cooks from what is in the fridge.", "Ask about allergies."
    )
    (recipes / "pantry.md").write_text("Rice, beans, onions.")
    return SkillLibrary(skills)


def turn(tools_config=None, active=None):
    config = RuntimeConfig.model_validate({"tools": tools_config or {}})
    session = Session(key="test:1", messages=[ChatMessage.user("a poem about rain")])
    session.active_skill = active
    message = IncomingMessage(ChatAddress("test", "1"), "u1", "a poem about rain")
    return TurnContext(message, session, config, RecordingChannel())


async def run_turn(tmp_path, library, llm, ctx):
    tools = ToolRegistry([*builtin_tools(), SkillTool(library)])
    context = ContextBuildingSystem(PromptFiles(tmp_path / "prompts"), tools, skills=library)
    await context.process(ctx)
    await ToolLoopSystem(llm, tools, prompt=context).process(ctx)


def skill_call(**arguments):
    return calls(("skill", json.dumps(arguments)))


def system_prompt(request):
    return request.messages[0].content


async def test_the_model_activates_a_skill_and_its_next_call_carries_the_instructions(
    tmp_path, library
):
    llm = ScriptedLlm(skill_call(action="activate", name="haiku"), text("Rain on the tin roof"))
    ctx = turn()
    await run_turn(tmp_path, library, llm, ctx)

    first, second = (system_prompt(r) for r in llm.requests)
    assert "\n# Active Skill" not in first
    assert "# Available Skills\n" in first and "- haiku: Writes haiku." in first
    section = second.split("# Active Skill: haiku\n", 1)[1]
    assert section.startswith(HAIKU)
    assert "Files of this skill (the skill tool reads them): syllables.md" in section
    assert ctx.session.active_skill == "haiku" and ctx.skill == "haiku"
    assert ctx.final_text == "Rain on the tin roof"
    result = next(m.content for m in ctx.turn_messages if m.role == "tool")
    assert result.startswith("Skill haiku is active") and "syllables.md" in result


async def test_the_model_turns_the_skill_off_and_reads_a_file_of_it(tmp_path, library):
    llm = ScriptedLlm(
        skill_call(action="read", path="syllables.md"),
        skill_call(action="read", path="../recipes/SKILL.md"),
        skill_call(action="deactivate"),
        text("Done."),
    )
    ctx = turn(active="haiku")
    await run_turn(tmp_path, library, llm, ctx)
    prompts = [system_prompt(r) for r in llm.requests]
    assert [f"# Active Skill: haiku\n{HAIKU}" in p for p in prompts] == [True, True, True, False]
    results = [m.content for m in ctx.turn_messages if m.role == "tool"]
    assert results[0] == "Vowel groups count once."
    assert results[1].startswith("Error: '../recipes/SKILL.md' is outside the skill's folder")
    assert results[2].startswith("Skill haiku is off")
    assert ctx.session.active_skill is None and ctx.skill is None


async def test_an_unknown_skill_is_an_error_naming_the_real_ones(tmp_path, library):
    llm = ScriptedLlm(skill_call(action="activate", name="sonnet"), text("ok"))
    ctx = turn()
    await run_turn(tmp_path, library, llm, ctx)
    result = next(m.content for m in ctx.turn_messages if m.role == "tool")
    assert result == "Error: there is no skill 'sonnet'. Skills: haiku, recipes."
    assert ctx.session.active_skill is None


async def test_reading_needs_a_skill_that_exists(tmp_path, library):
    llm = ScriptedLlm(
        skill_call(action="read", path="syllables.md"),
        skill_call(action="read", name="sonnet", path="x.md"),
        skill_call(action="read", name="recipes", path="pantry.md"),
        text("ok"),
    )
    ctx = turn()
    await run_turn(tmp_path, library, llm, ctx)
    results = [m.content for m in ctx.turn_messages if m.role == "tool"]
    assert results[0].startswith("Error: no skill is active; name one to read from.")
    assert results[1] == "Error: there is no skill 'sonnet'. Skills: haiku, recipes."
    assert results[2] == "Rice, beans, onions."
    assert ctx.session.active_skill is None, "reading activates nothing"


async def test_activating_the_active_skill_again_changes_nothing(tmp_path, library):
    llm = ScriptedLlm(skill_call(action="activate", name="haiku"), text("ok"))
    ctx = turn(active="haiku")
    await run_turn(tmp_path, library, llm, ctx)
    result = next(m.content for m in ctx.turn_messages if m.role == "tool")
    assert result == "Skill haiku is already active."
    first, second = (system_prompt(r) for r in llm.requests)
    assert first == second and first.count("\n# Active Skill: haiku\n") == 1


async def test_with_the_tool_off_the_model_sees_no_catalogue_but_the_chats_skill_stays(
    tmp_path, library
):
    llm = ScriptedLlm(text("ok"))
    ctx = turn({"skill": False}, active="recipes")
    await run_turn(tmp_path, library, llm, ctx)
    prompt = system_prompt(llm.requests[0])
    assert "# Available Skills" not in prompt
    assert "skill" not in {t.name for t in llm.requests[0].tools}
    assert "# Active Skill: recipes\nAsk about allergies.\n" in prompt + "\n"
    assert "Files of this skill" not in prompt, "the model could not read them"


async def test_a_vanished_skill_leaves_the_prompt_but_not_the_session(tmp_path, library):
    llm = ScriptedLlm(text("ok"))
    ctx = turn(active="limerick")
    await run_turn(tmp_path, library, llm, ctx)
    assert "\n# Active Skill" not in system_prompt(llm.requests[0])
    assert ctx.skill is None and ctx.session.active_skill == "limerick"


def command(text):
    call = parse_command(IncomingMessage(ChatAddress("test", "1"), "u1", text))
    assert call is not None
    return call


async def test_skill_command_lists_activates_and_turns_off(tmp_path, library):
    sessions = JsonSessionStore(tmp_path / "sessions")
    registry = CommandRegistry()
    SkillCommands(registry, library, sessions).register()

    listing = await registry.run(command("/skill"))
    assert listing.startswith("Skills (none active in this chat):\n• haiku: Writes haiku.")
    assert await registry.run(command("/skill sonnet")) == (
        "There is no skill 'sonnet'. Send /skill to see them."
    )
    reply = await registry.run(command("/skill Haiku"))
    assert reply == "Skill haiku is active in this chat: Writes haiku. Use for short poems."
    on_disk = JsonSessionStore(tmp_path / "sessions")
    assert (await on_disk.load("test:1")).active_skill == "haiku", "saved with the session"
    assert (await registry.run(command("/skill"))).splitlines()[1].startswith("→ haiku")

    assert await registry.run(command("/skill off")) == "Skill haiku is off for this chat."
    assert await registry.run(command("/skill off")) == "No skill is active in this chat."
    assert (await JsonSessionStore(tmp_path / "sessions").load("test:1")).active_skill is None


async def test_skill_command_with_no_skills_says_where_they_go(tmp_path):
    registry = CommandRegistry()
    SkillCommands(registry, SkillLibrary(tmp_path / "none"), JsonSessionStore(tmp_path)).register()
    assert "preferences/skills/" in await registry.run(command("/skill"))
