"""The `--rag` long-conversation benchmark reads both memory sections out of a system prompt,
as `ContextBuildingSystem.render` lays them out (the relevant block inside its fence)."""

from bench.longconv_rag import relevant_lines, sections_of
from bot.untrusted import fenced

MEMORY = "- [2025-03-09] my sister Leila lives in Porto\n- [2025-06-22] my cat Miso is three"
RELEVANT = (
    "Past conversations:\n- Date: 2025-03-09 19:00 User: Leila moved to Porto Assistant: Nice."
)


def prompt(memory: str = MEMORY, relevant: str = RELEVANT) -> str:
    sections = ["I am the bot.", "Rules for untrusted data."]
    if memory:
        sections.append(f"# Memory\n{memory}")
    if relevant:
        sections.append(f"# Relevant Memory\n{fenced('memory', relevant)}")
    sections.append("# Available Tools\n- current_time: the time")
    return "\n\n".join(sections)


def test_both_sections_are_read_without_the_fence_or_the_next_section():
    asked = sections_of(prompt())
    assert asked.memory.lines == tuple(MEMORY.splitlines())
    assert asked.relevant.lines == tuple(RELEVANT.splitlines())
    assert asked.both.lines == asked.memory.lines + asked.relevant.lines
    assert asked.both.text == f"{MEMORY}\n{RELEVANT}"


def test_a_missing_section_reads_as_empty():
    assert relevant_lines(prompt(relevant="")) == []
    asked = sections_of(prompt(memory=""))
    assert asked.memory.lines == () and asked.relevant.lines == tuple(RELEVANT.splitlines())
