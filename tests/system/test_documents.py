"""A PDF sent in Telegram is read, filed in its sender's long-term memory (a real LightRAG),
recalled for them and for nobody else, and gone from LightRAG after `/forget all`."""

import re

import pytest

from bot.rag.documents import owner_tag_of
from tests.fakes.files import pdf_with_text
from tests.system.harness import section, wait_for

pytestmark = pytest.mark.system
OWNER, OTHER = 9301, 9302
PDF_TEXT = (
    "Vexmoor warehouse handbook.\n"
    "The Vexmoor warehouse alarm code is 7319.\n"
    "The spare forklift key hangs behind the Quorlith cabinet."
)
QUESTION = "What is the Vexmoor warehouse alarm code?"


def send_pdf(stack, user_id: int, name: str) -> str:
    before = len(stack.replies(user_id))
    stack.telegram.send_media(
        stack.user(user_id),
        "document",
        content=pdf_with_text(PDF_TEXT, "Opening hours: 06:00 to 22:00."),
        file_name=name,
        mime_type="application/pdf",
    )
    return stack.wait_replies(user_id, before + 1, within=60)[before]


def test_a_pdf_is_recalled_by_its_owner_only_and_forgotten_with_forget_all(
    make_stack, own_lightrag
):
    stack = make_stack(own_lightrag, allowed=[OWNER, OTHER])
    reply = send_pdf(stack, OWNER, "warehouse.pdf")
    assert reply.startswith("I read “warehouse.pdf”: 2 pages, "), reply
    assert "It's in my memory now" in reply
    stack.wait_indexed(1)
    sources = own_lightrag.file_sources()
    assert [owner_tag_of(s) for s in sources] == [str(OWNER)]
    assert all(s.startswith("doc_") for s in sources)

    assert "fresh conversation" in stack.ask(OWNER, "/new")
    stack.converse(OWNER, QUESTION)
    # Recalled once: from short-term memory's parts of it, or from LightRAG, whichever the
    # prompt took first (each section leaves out what the other holds).
    prompt = stack.last_system_prompt()
    recalled = section(prompt, "Memory") + section(prompt, "Relevant Memory")
    assert "7319" in recalled and prompt.count("alarm code is 7319") == 1, prompt

    stack.converse(OTHER, QUESTION)
    assert "7319" not in stack.last_system_prompt()

    assert "/forget confirm" in stack.ask(OWNER, "/forget all")
    done = stack.ask(OWNER, "/forget confirm")
    assert done.startswith("Done: deleted") and "LightRAG" in done, done
    wait_for(
        lambda: str(OWNER) not in [owner_tag_of(s) for s in own_lightrag.file_sources()],
        60,
        "LightRAG kept the shared document",
    )
    stack.converse(OWNER, QUESTION)
    assert "7319" not in stack.last_system_prompt()
    assert "warehouse.pdf" not in stack.last_system_prompt()  # the short-term note went too


def test_kill_9_mid_filing_uploads_no_piece_twice(make_stack, own_lightrag):
    """`kill -9` while a long document's pieces go to LightRAG: the inbox replays the message
    and files it again, and only the pieces not yet sent are sent after the restart."""
    user = 9303
    stack = make_stack(own_lightrag, allowed=[user])
    lines = [f"Line {n}: shipment {n * 7919 % 100_000} left dock {n % 12}." for n in range(4000)]
    text = "\n".join(lines)  # about 170,000 characters: some 95 pieces
    stack.telegram.send_media(
        stack.user(user), "document", content=text.encode(), file_name="log.txt",
        mime_type="text/plain",
    )  # fmt: skip
    uploads = lambda: stack.bot.log().count("[RagIndexing] Indexed")  # noqa: E731
    stack.telegram.wait_for_sync(lambda: uploads() >= 3, within=60)
    stack.bot.kill()
    # Unfiled at the kill, the inbox replays the message and the document is filed again;
    # filed already, only the queue goes on. Which comes first depends on the machine.
    replayed = stack.replies(user) == []
    sent_before = uploads()

    stack.bot.start(stack.telegram)
    reply = stack.wait_replies(user, 1, within=120)[0]
    assert reply.startswith("I read “log.txt”"), reply
    stack.wait_queue_empty(within=180)
    pieces = int(re.findall(r"in (\d+) piece\(s\)", stack.bot.log())[-1])
    assert pieces > 50
    # at most one piece twice: the one LightRAG took in the instant before the kill (409)
    assert uploads() <= pieces + 1, f"{sent_before} sent before the kill, {uploads()} in all"
    if replayed:
        assert "was sent before; not again" in stack.bot.log()
