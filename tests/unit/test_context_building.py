from bot.config import RuntimeConfig
from bot.conversation import ChatAddress, IncomingMessage, Session
from bot.pipeline import TurnContext
from bot.pipeline.context_building import ContextBuildingSystem
from bot.prompts import FALLBACK_PROMPT, PromptFiles
from bot.tools import ToolRegistry, builtin_tools
from tests.fakes.channel import RecordingChannel


class FakeMemory:
    def __init__(self, text="", fail=False):
        self.text, self.fail, self.asked = text, fail, []

    async def recall(self, user_id, query):
        self.asked.append((user_id, query))
        if self.fail:
            raise RuntimeError("memory broke")
        return self.text


class FakeRag:
    def __init__(self, text=""):
        self.text, self.asked = text, []

    async def query(self, text, mode, owner):
        self.asked.append((text, mode, owner))
        return self.text


def ctx_for(config=None, text="how did we deploy?"):
    message = IncomingMessage(ChatAddress("t", "1"), "u7", text)
    config = RuntimeConfig.model_validate(config or {"rag": {"enabled": True}})
    return TurnContext(message, Session(key="t:1"), config, RecordingChannel())


def system(tmp_path, memory=None, rag=None):
    (tmp_path / "IDENTITY.md").write_text("I am the bot.")
    (tmp_path / "RULES.md").write_text("Be kind.")
    (tmp_path / "EXTRA.md").write_text("Extra notes.")
    return ContextBuildingSystem(PromptFiles(tmp_path), ToolRegistry(builtin_tools()), memory, rag)


async def test_sections_follow_the_spec_order(tmp_path):
    ctx = ctx_for()
    ctx.skill = "devops"
    memory, rag = FakeMemory("- prefers Docker"), FakeRag("Deployed with compose before.")
    await system(tmp_path, memory, rag).process(ctx)
    prompt = ctx.system_prompt
    order = [
        "I am the bot.",
        "Be kind.",
        "Extra notes.",
        "# Memory\n- prefers Docker",
        "# Relevant Memory\nDeployed with compose before.",
        "# Active Skill: devops",
        "# Available Tools\n- current_time",
    ]
    positions = [prompt.index(part) for part in order]
    assert positions == sorted(positions)
    assert memory.asked == [("u7", "how did we deploy?")]
    assert rag.asked == [("how did we deploy?", "hybrid", "u7")]


async def test_empty_or_disabled_sources_leave_their_sections_out(tmp_path):
    ctx = ctx_for({"rag": {"enabled": False}, "memory": {"enabled": True}})
    rag = FakeRag("should not be asked")
    await system(tmp_path, FakeMemory(""), rag).process(ctx)
    assert "# Memory" not in ctx.system_prompt
    assert "# Relevant Memory" not in ctx.system_prompt
    assert rag.asked == []


async def test_a_failing_memory_only_drops_its_own_section(tmp_path):
    ctx = ctx_for()
    await system(tmp_path, FakeMemory(fail=True), FakeRag("old context")).process(ctx)
    assert "# Memory" not in ctx.system_prompt
    assert "# Relevant Memory\nold context" in ctx.system_prompt


def test_prompt_files_are_reread_when_edited(tmp_path):
    prompts = PromptFiles(tmp_path)
    assert prompts.text() == FALLBACK_PROMPT
    (tmp_path / "IDENTITY.md").write_text("v1")
    assert prompts.text() == "v1"
    (tmp_path / "IDENTITY.md").write_text("v2 longer")
    (tmp_path / "AAA.md").write_text("after identity")
    assert prompts.text() == "v2 longer\n\nafter identity"
