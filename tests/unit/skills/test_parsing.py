"""`SKILL.md` parsing: the Agent Skills format's rules, and a clear reason when one is broken."""

from pathlib import Path

import pytest

from bot.skills import InvalidSkill, parse_skill

FOLDER = Path("/skills/pdf-tools")


def skill_md(front: str, body: str = "Step one.") -> str:
    return f"---\n{front}\n---\n\n{body}\n"


def test_a_skill_with_every_field_of_the_format_parses():
    text = skill_md(
        "name: pdf-tools\n"
        "description: >\n  Extracts text from PDFs.\n  Use when the user sends a PDF.\n"
        "license: Apache-2.0\n"
        "compatibility: Needs nothing\n"
        "metadata:\n  author: example-org\n  version: '1.0'\n"
        "allowed-tools: Read Bash(git:*)\n"
        "disable-model-invocation: false",  # another client's field: ignored
        "# PDF tools\n\n1. Read the file.",
    )
    skill = parse_skill(FOLDER, text)
    assert skill.name == "pdf-tools"
    assert skill.description == "Extracts text from PDFs. Use when the user sends a PDF."
    assert skill.body == "# PDF tools\n\n1. Read the file."
    assert skill.license == "Apache-2.0" and skill.compatibility == "Needs nothing"
    assert skill.metadata == {"author": "example-org", "version": "1.0"}
    assert skill.allowed_tools == ("Read", "Bash(git:*)")
    assert skill.folder == FOLDER


def test_a_byte_order_mark_and_an_empty_body_are_fine():
    skill = parse_skill(FOLDER, "\ufeff---\nname: pdf-tools\ndescription: d\n---\n")
    assert (skill.name, skill.body) == ("pdf-tools", "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: pdf-tools\ndescription: d\n", "must start with a '---' line"),
        ("---\nname: pdf-tools\ndescription: d\n", "never closed"),
        (skill_md("name: pdf-tools\ndescription: [unclosed"), "not valid YAML"),
        (skill_md("name: pdf-tools\ndescription: Use when: PDFs"), "put quotes around a value"),
        (skill_md("- a list"), "must be a mapping"),
        (skill_md("description: no name"), "name: Field required"),
        (skill_md("name: pdf-tools"), "description: Field required"),
        (skill_md("name: pdf-tools\ndescription: ''"), "description: String should have at least"),
        (skill_md("name: pdf-tools\ndescription: '   '"), "description: must not be blank"),
        (skill_md("name: 42\ndescription: d"), "name: Input should be a valid string"),
        (skill_md("name: PDF-Tools\ndescription: d"), "must be lowercase"),
        (skill_md("name: -pdf-tools\ndescription: d"), "single hyphens"),
        (skill_md("name: pdf--tools\ndescription: d"), "single hyphens"),
        (skill_md("name: pdf_tools\ndescription: d"), "single hyphens"),
        (skill_md("name: other-name\ndescription: d"), "same as its folder's name 'pdf-tools'"),
        (skill_md(f"name: pdf-tools\ndescription: {'x' * 1025}"), "at most 1024 characters"),
        (skill_md(f"name: {'a' * 65}\ndescription: d"), "at most 64 characters"),
        (skill_md(f"name: pdf-tools\ndescription: d\ncompatibility: {'c' * 501}"), "at most 500"),
        (skill_md("name: pdf-tools\ndescription: d\nmetadata:\n  v: 1.0"), "metadata.v"),
        (skill_md("name: pdf-tools\ndescription: d\nmetadata: [1]"), "metadata"),
        (skill_md("name: pdf-tools\ndescription: d\nallowed-tools: [Read]"), "allowed-tools"),
        (skill_md("a: &x big\nname: pdf-tools\ndescription: *x"), "aliases"),
        (skill_md("name: pdf-tools\ndescription: !!python/name:os.system"), "not valid YAML"),
        (skill_md("name: pdf-tools\ndescription: d\nx: " + "[" * 5000 + "]" * 5000), "nested"),
        (skill_md("name: pdf-tools\ndescription: d\n" + "# pad\n" * 3000), "longer than 16,000"),
    ],
)
def test_a_broken_skill_md_is_refused_with_its_reason(text, reason):
    with pytest.raises(InvalidSkill) as refused:
        parse_skill(FOLDER, text)
    assert reason in str(refused.value)
