"""A fact said in a voice note is remembered like a typed one: recalled after `/new`."""

import pytest

from tests.fakes.audio import voice_note
from tests.system.harness import echo, section

pytestmark = pytest.mark.system

SAID = "Remember that my daughter's piano recital is on the 14th at the Grieg Hall."
HEARD = f"[Voice note, transcribed]\n{SAID}"
"""The message as kept: marked as heard by a speech model, and still the user's words."""


def test_a_fact_said_in_a_voice_note_is_recalled_after_new(make_stack, shared_lightrag):
    user = 4301
    stack = make_stack(shared_lightrag, allowed=[user])
    already = stack.lightrag.wait_until_processed(0)["processed"]
    stack.llm_server.script_transcripts(SAID)
    stack.telegram.send_media(stack.user(user), "voice", content=voice_note(3.0), duration=3)
    stack.telegram.wait_for_sync(lambda: echo(HEARD) in stack.replies(user), 60)
    assert stack.replies(user)[0] == f"I heard: “{SAID}”"
    (upload,) = stack.llm_server.uploads
    assert upload.filename == "audio.ogg" and upload.fields["model"] == "whisper-1"
    assert stack.wait_session(user, 2)[0] == ("user", HEARD)
    stack.wait_indexed(already + 1)

    assert "fresh conversation" in stack.ask(user, "/new")
    stack.converse(user, "When is the recital?")
    prompt = stack.last_system_prompt()
    assert "14th" in section(prompt, "Memory"), prompt
    assert any(SAID in text for text in stack.lightrag.content_summaries()), "indexed as heard"
    # `# Relevant Memory` leaves out what `# Memory` already holds: the words once, not twice.
    assert prompt.count("Grieg Hall") == 1, prompt
