"""`/forget all` leaves none of the user's words anywhere the bot or LightRAG keeps them."""

from pathlib import Path

import httpx
import pytest

from bot.rag.documents import owner_tag_of
from tests.fakes.lightrag_server import LightRagServer
from tests.system.harness import wait_for

MIRA, OLAF = 9101, 9102
SECRET_WORDS = ("Zorblaxia", "Quindellar", "Plimbertrude", "Xanthrolix")


@pytest.fixture
def caching_lightrag(rag_llm_url, tmp_path):
    """A LightRAG that keeps its LLM's extraction results (its default), to rebuild graphs."""
    server = LightRagServer(
        tmp_path / "lightrag", rag_llm_url, "rag-system-SECRET-key-4567",
        extra_env={"ENABLE_LLM_CACHE_FOR_EXTRACT": "true"},
    )  # fmt: skip
    server.start()
    yield server
    server.stop()


def files_holding(folder: Path, words: tuple[str, ...]) -> dict[str, list[str]]:
    """Every file under `folder` in which any of `words` occurs (any case), with the words."""
    found: dict[str, list[str]] = {}
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace").lower()
            hits = [word for word in words if word.lower() in text]
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


def test_forget_all_leaves_the_words_nowhere_on_disk_or_in_lightrag(make_stack, caching_lightrag):
    stack = make_stack(caching_lightrag, allowed=[MIRA, OLAF])
    server = caching_lightrag
    stack.converse(MIRA, "Remember: my cat Zorblaxia eats Quindellar biscuits from Vrellmont.")
    assert "fresh conversation" in stack.ask(MIRA, "/new")
    stack.converse(MIRA, "My neighbour Plimbertrude grows Xanthrolix tomatoes in Vrellmont.")
    stack.converse(OLAF, "Our team offsite next spring is in Vrellmont near the old harbour.")
    stack.wait_indexed(3)
    storage = server.workdir / "rag_storage"
    assert files_holding(stack.data, SECRET_WORDS), "the words were kept before"
    assert files_holding(storage, SECRET_WORDS), "and LightRAG had them"

    question = stack.ask(MIRA, "/forget all")
    assert "/forget confirm" in question
    done = stack.ask(MIRA, "/forget confirm")
    assert done.startswith("Done: deleted"), done
    for kept_in in ("short-term memory", "LightRAG", "conversation", "Telegram"):
        assert kept_in in done, (kept_in, done)

    def gone_from_server() -> bool:
        tags = [owner_tag_of(source) for source in server.file_sources()]
        status = httpx.get(
            f"{server.url}/documents/pipeline_status", headers=server.headers(), timeout=5
        ).json()
        return str(MIRA) not in tags and not status.get("busy")

    wait_for(gone_from_server, 60, "LightRAG kept the user's documents")
    assert [owner_tag_of(s) for s in server.file_sources()] == [str(OLAF)]
    assert files_holding(stack.data, SECRET_WORDS) == {}
    assert files_holding(storage, SECRET_WORDS) == {}
    labels = httpx.get(f"{server.url}/graph/label/list", headers=server.headers(), timeout=5).json()
    assert not [label for label in labels if label.lower() in {w.lower() for w in SECRET_WORDS}]
    assert "Vrellmont" in labels, "what the other user said stays"

    stack.converse(MIRA, "What does my cat eat?")
    assert "Quindellar" not in stack.last_system_prompt()
