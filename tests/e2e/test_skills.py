"""Skills through the whole app: `/skill` in the emulated Telegram, a chat's skill kept across
a restart and cleared by `/new`, and SKILL.md edits applied while the bot runs."""

import os

import pytest

from bot.app import BotApp
from tests.e2e.conftest import ALICE as ALICE_CHAT
from tests.e2e.conftest import say
from tests.e2e.test_telegram_bot import (
    ALICE,
    BOB,
    replies,
    start_bot,  # noqa: F401 (a fixture)
)
from tests.fakes.channel import RecordingChannel
from tests.fakes.skills import write_skill

pytestmark = pytest.mark.e2e

TRIP_BODY_START = "# Trip planner\n\n1. Find out where, when, for how long"


def active_skill_section(prompt: str) -> str | None:
    """The `# Active Skill: ...` section of a system prompt, or None."""
    if "\n# Active Skill: " not in prompt:
        return None
    return "# Active Skill: " + prompt.split("\n# Active Skill: ", 1)[1].split("\n\n# ", 1)[0]


def prompt_answering(fake_llm, text: str) -> str:
    """The system prompt of the request whose last message is `text`."""
    (prompt,) = [
        body["messages"][0]["content"]
        for body in fake_llm.requests
        if body["messages"][-1]["content"] == text
    ]
    return prompt


async def test_skill_in_telegram_lists_activates_and_turns_off_per_chat(
    start_bot,  # noqa: F811 (the imported fixture)
    telegram,
    fake_llm,
):
    await start_bot()
    assert "skill" in {c["command"] for c in telegram.commands}
    telegram.send_text(ALICE, "/skill")
    (listing,) = await replies(telegram, ALICE.id)
    assert listing.text.startswith("Skills (none active in this chat):\n• trip-planner: Plans")
    assert "• writing-coach: Improves a text" in listing.text

    telegram.send_text(ALICE, "/skill trip-planner")
    telegram.send_text(ALICE, "Plan a weekend in Lisbon for two")
    telegram.send_text(BOB, "Plan a weekend in Porto for two")
    await replies(telegram, ALICE.id, 3)
    await replies(telegram, BOB.id, 1)
    assert telegram.texts(ALICE.id)[1].startswith("Skill trip-planner is active in this chat")
    section = active_skill_section(prompt_answering(fake_llm, "Plan a weekend in Lisbon for two"))
    assert section is not None
    assert section.startswith(f"# Active Skill: trip-planner\n{TRIP_BODY_START}")
    assert section.endswith(
        "Files of this skill (the skill tool reads them): references/packing-list.md"
    )
    bob_prompt = prompt_answering(fake_llm, "Plan a weekend in Porto for two")
    assert active_skill_section(bob_prompt) is None, "one chat's skill stays in that chat"

    telegram.send_text(ALICE, "/skill off")
    telegram.send_text(ALICE, "And a day trip to Sintra?")
    await replies(telegram, ALICE.id, 5)
    assert telegram.texts(ALICE.id)[3] == "Skill trip-planner is off for this chat."
    assert active_skill_section(prompt_answering(fake_llm, "And a day trip to Sintra?")) is None


async def test_a_chats_skill_survives_a_restart_and_new_clears_it(app, settings, fake_llm):
    channel = RecordingChannel()
    await app.handle(say(ALICE_CHAT, "/skill writing-coach"), channel)
    restarted = BotApp.build(settings)
    try:
        await restarted.handle(say(ALICE_CHAT, "Polish: i has a question"), channel)
        section = active_skill_section(fake_llm.system_prompts()[-1])
        assert section is not None and section.startswith("# Active Skill: writing-coach\n")
        await restarted.handle(say(ALICE_CHAT, "/new"), channel)
        await restarted.handle(say(ALICE_CHAT, "Polish: me go home"), channel)
        assert active_skill_section(fake_llm.system_prompts()[-1]) is None
    finally:
        await restarted.aclose()


async def test_skill_files_added_edited_broken_and_removed_apply_without_a_restart(
    app, settings, fake_llm
):
    channel = RecordingChannel()
    skills = settings.skills_dir
    folder = write_skill(skills, "haiku", "Writes haiku.", "Five, seven, five.")
    await app.handle(say(ALICE_CHAT, "/skill haiku"), channel)
    await app.handle(say(ALICE_CHAT, "A poem about rain"), channel)
    assert active_skill_section(fake_llm.system_prompts()[-1]) == (
        "# Active Skill: haiku\nFive, seven, five."
    )

    write_skill(skills, "haiku", "Writes haiku.", "Count syllables twice, then write.")
    st = (folder / "SKILL.md").stat()
    os.utime(folder / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))
    broken = write_skill(skills, "limerick", "Writes limericks.")
    (broken / "SKILL.md").write_text("---\nname: limerick\n---\nno description\n")
    await app.handle(say(ALICE_CHAT, "A poem about snow"), channel)
    prompt = fake_llm.system_prompts()[-1]
    assert active_skill_section(prompt) == (
        "# Active Skill: haiku\nCount syllables twice, then write."
    )
    assert "- limerick" not in prompt and "- writing-coach: Improves" in prompt
    await app.handle(say(ALICE_CHAT, "/status"), channel)
    status = channel.texts()[-1]
    assert "Skills: 3 (haiku, trip-planner, writing-coach); /skill lists them" in status
    assert "⚠ Skill limerick left out: description: Field required" in status

    (folder / "SKILL.md").unlink()
    await app.handle(say(ALICE_CHAT, "A poem about wind"), channel)
    assert active_skill_section(fake_llm.system_prompts()[-1]) is None
    await app.handle(say(ALICE_CHAT, "/skill"), channel)
    assert "(this chat's, haiku, is not available now)" in channel.texts()[-1]
