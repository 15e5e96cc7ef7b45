"""A skill's files, read for the model: inside the skill's folder only, text only, capped."""

import os

import pytest

from bot.skills import ResourceRefused, SkillLibrary, list_resources, read_resource
from bot.skills.resources import MAX_RESOURCE_BYTES
from tests.fakes.skills import write_skill


@pytest.fixture
async def skill(tmp_path):
    skills = tmp_path / "skills"
    folder = write_skill(skills, "trip", "Plans trips.", "See references/packing.md.")
    (folder / "references").mkdir()
    (folder / "references" / "packing.md").write_text("- passport\n- charger\n")
    (tmp_path / "secret.txt").write_text("the server's secret")
    library = SkillLibrary(skills)
    await library.refresh()
    found = library.get("trip")
    assert found is not None
    return found


def test_a_file_of_the_skill_is_read(skill):
    assert read_resource(skill, "references/packing.md") == "- passport\n- charger\n"
    assert read_resource(skill, "./references//packing.md") == "- passport\n- charger\n"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../secret.txt", "outside the skill's folder"),
        ("references/../../secret.txt", "outside the skill's folder"),
        ("/etc/passwd", "outside the skill's folder"),
        ("", "give the path"),
        ("references", "not a regular file"),
        ("references/nothing.md", "is not a file of skill trip"),
        ("a\\..\\b", "not a valid path"),
    ],
)
def test_paths_out_of_the_folder_or_not_to_a_file_are_refused(skill, path, reason):
    with pytest.raises(ResourceRefused) as refused:
        read_resource(skill, path)
    assert reason in str(refused.value)
    assert str(skill.folder) not in str(refused.value), "no server path for the model"


def test_a_symbolic_link_leading_out_of_the_folder_is_refused(skill, tmp_path):
    os.symlink(tmp_path / "secret.txt", skill.folder / "references" / "link.md")
    os.symlink(tmp_path, skill.folder / "up")
    for path in ("references/link.md", "up/secret.txt"):
        with pytest.raises(ResourceRefused, match="leads outside"):
            read_resource(skill, path)
    assert "references/link.md" not in list_resources(skill)


def test_a_link_inside_the_folder_is_followed(skill):
    os.symlink(skill.folder / "references" / "packing.md", skill.folder / "list.md")
    assert read_resource(skill, "list.md").startswith("- passport")


def test_a_big_file_is_cut_and_says_so_and_binary_is_refused(skill):
    (skill.folder / "big.md").write_text("é" * MAX_RESOURCE_BYTES)  # two bytes each
    text = read_resource(skill, "big.md")
    assert text.endswith(f"… [cut at {MAX_RESOURCE_BYTES:,} bytes]")
    assert text.startswith("é" * 100) and "\ufffd" not in text
    (skill.folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(ResourceRefused, match="not a text file"):
        read_resource(skill, "image.png")


def test_the_listing_names_the_files_but_not_skill_md_or_hidden_ones(skill):
    (skill.folder / ".hidden").write_text("x")
    (skill.folder / "scripts").mkdir()
    (skill.folder / "scripts" / "run.py").write_text("print(1)")
    assert list_resources(skill) == ["references/packing.md", "scripts/run.py"]


def test_a_hard_link_is_neither_read_nor_listed(skill, tmp_path):
    os.link(tmp_path / "secret.txt", skill.folder / "references" / "notes.md")
    with pytest.raises(ResourceRefused, match="is a hard link"):
        read_resource(skill, "references/notes.md")
    assert "references/notes.md" not in list_resources(skill)
