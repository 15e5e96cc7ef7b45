"""The skill library: invalid skills left out with one log line, and hot reload on each refresh."""

import logging
import os
import threading

from bot.conversation import MemoryScope
from bot.skills import SkillLibrary
from tests.fakes.skills import write_skill

SCOPE = MemoryScope("u1", "u1")


def touch_later(path, seconds=10):
    """Move the file's modification time on, so the edit is seen however coarse the clock."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


async def test_an_invalid_skill_is_left_out_once_logged_and_shown_in_status(tmp_path, caplog):
    write_skill(tmp_path, "good-one", "Works.", "Do good.")
    bad = write_skill(tmp_path, "bad-one", "Broken.")
    (bad / "SKILL.md").write_text("---\nname: Bad-One\ndescription: x\n---\n")
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "README.md").write_text("not a skill")
    library = SkillLibrary(tmp_path)
    with caplog.at_level(logging.INFO, logger="bot.skills.library"):
        await library.refresh()
        await library.refresh()
    assert [s.name for s in library.available()] == ["good-one"]
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 2, "one line per broken folder, not one per refresh"
    assert any("bad-one: name 'Bad-One' must be lowercase" in line for line in skipped)
    assert any("empty-folder: no SKILL.md" in line for line in skipped)

    lines = await library.status_lines(SCOPE)
    assert lines[0] == "Skills: 1 (good-one); /skill lists them"
    assert "⚠ Skill bad-one left out: name 'Bad-One' must be lowercase" in lines
    assert "⚠ Skill empty-folder left out: no SKILL.md in the folder" in lines
    assert not any(str(tmp_path) in line for line in lines), "no server path in /status"


async def test_no_skills_folder_means_no_skills_and_no_status_line(tmp_path):
    library = SkillLibrary(tmp_path / "missing")
    await library.refresh()
    assert library.available() == []
    assert await library.status_lines(SCOPE) == []


async def test_adding_editing_and_removing_a_skill_take_effect_on_the_next_refresh(tmp_path):
    library = SkillLibrary(tmp_path)
    await library.refresh()
    assert library.available() == []

    folder = write_skill(tmp_path, "haiku", "Writes haiku.", "Five, seven, five.")
    await library.refresh()
    haiku = library.get("haiku")
    assert haiku is not None and haiku.body == "Five, seven, five."

    write_skill(tmp_path, "haiku", "Writes haiku poems.", "Count the syllables twice.")
    touch_later(folder / "SKILL.md")
    await library.refresh()
    haiku = library.get("haiku")
    assert haiku is not None
    assert (haiku.description, haiku.body) == ("Writes haiku poems.", "Count the syllables twice.")

    (folder / "SKILL.md").write_text("---\nname: haiku\n---\n")  # broken by an edit
    touch_later(folder / "SKILL.md", 20)
    await library.refresh()
    assert library.get("haiku") is None
    assert [p.folder for p in library.problems()] == ["haiku"]

    (folder / "SKILL.md").unlink()
    folder.rmdir()
    await library.refresh()
    assert library.get("haiku") is None and library.problems() == []


async def test_an_unchanged_skill_is_not_read_again(tmp_path):
    write_skill(tmp_path, "haiku", "Writes haiku.", "v1")
    library = SkillLibrary(tmp_path)
    await library.refresh()
    first = library.get("haiku")
    await library.refresh()
    assert library.get("haiku") is first, "same size and time: the parsed skill is kept"


async def test_an_oversized_skill_md_is_refused_unread(tmp_path):
    write_skill(tmp_path, "huge", "Too big.", "x" * 70_000)
    library = SkillLibrary(tmp_path)
    await library.refresh()
    assert library.get("huge") is None
    assert "over the 65,536 limit" in library.problems()[0].reason


async def test_a_skill_md_that_is_a_fifo_is_left_out_without_waiting_for_a_writer(tmp_path):
    folder = tmp_path / "piped"
    folder.mkdir()
    os.mkfifo(folder / "SKILL.md")
    write_skill(tmp_path, "good-one", "Works.", "Do good.")
    # only so that a bot that does wait is not stuck for ever: a writer after 10 s
    rescue = threading.Timer(10, lambda: (folder / "SKILL.md").write_text("late"))
    rescue.start()
    try:
        library = SkillLibrary(tmp_path)
        await library.refresh()
    finally:
        rescue.cancel()
    assert [p.reason for p in library.problems()] == ["SKILL.md is not a regular file"]
    assert [s.name for s in library.available()] == ["good-one"]


async def test_a_skill_md_linked_out_of_its_folder_is_refused_and_one_inside_is_read(tmp_path):
    skills = tmp_path / "skills"
    outside = write_skill(tmp_path / "elsewhere", "secret", "Secret.", "the server's secrets")
    linked = skills / "secret"
    linked.mkdir(parents=True)
    os.symlink(outside / "SKILL.md", linked / "SKILL.md")
    inside = write_skill(skills, "haiku", "Writes haiku.", "Five, seven, five.")
    (inside / "SKILL.md").rename(inside / "real.md")
    os.symlink(inside / "real.md", inside / "SKILL.md")
    library = SkillLibrary(skills)
    await library.refresh()
    assert library.get("secret") is None
    assert [p.reason for p in library.problems()] == [
        "SKILL.md is a link leading out of the folder"
    ]
    haiku = library.get("haiku")
    assert haiku is not None and haiku.body == "Five, seven, five."


async def test_a_linked_skill_folder_is_still_read(tmp_path):
    outside = write_skill(tmp_path / "checkout", "haiku", "Writes haiku.", "Five, seven, five.")
    (tmp_path / "skills").mkdir()
    os.symlink(outside, tmp_path / "skills" / "haiku")
    library = SkillLibrary(tmp_path / "skills")
    await library.refresh()
    assert library.get("haiku") is not None
