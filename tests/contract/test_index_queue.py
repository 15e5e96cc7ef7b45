"""What every RAG index queue and ledger promise (`IndexQueueStore`, `IndexLedgerStore`):
documents kept across a restart and handed out oldest first, one leaving only once sent or
refused; a user's documents counted and forgotten apart from anyone else's; the ledger's
entries per user, each as last recorded. The files and PostgreSQL alike."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.rag.model import LedgerEntry, RagDocument

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def document(owner: str, text: str) -> RagDocument:
    return RagDocument(
        owner=owner,
        chat_key=f"telegram:{owner}",
        file_source=f"{owner}-{text}",
        text=text,
        created_at=AT,
    )


def entry(file_source: str, doc_id: str | None) -> LedgerEntry:
    return LedgerEntry(
        file_source=file_source, doc_id=doc_id, track_id="t", chat_key="c", indexed_at=AT
    )


async def test_documents_survive_a_restart_and_go_oldest_first(new_index_queue):
    queue = await new_index_queue()
    for text in ("first", "second", "third"):
        await queue.put(document("ann", text))
    restarted = await new_index_queue()
    assert restarted.depth == 3
    first = await restarted.claim()
    assert first.document.text == "first"
    await restarted.done(first)
    second = await restarted.claim()
    await restarted.release(second)  # the server was down: it goes first next time
    again = await restarted.claim()
    assert again.document.text == "second"
    await restarted.done(again)
    await restarted.done(await restarted.claim())
    assert await restarted.claim() is None
    assert restarted.depth == 0


async def test_a_refused_document_is_set_aside_and_counted(new_index_queue):
    queue = await new_index_queue()
    await queue.put(document("ann", "too large"))
    await queue.put(document("ann", "fine"))
    await queue.refuse(await queue.claim(), "HTTP 413: too large")
    assert queue.failed_count() == 1
    assert (await queue.claim()).document.text == "fine"
    assert await queue.count_of("ann") == 2, "set aside, its words are still there"


async def test_a_users_documents_are_counted_and_forgotten_apart(new_index_queue):
    queue = await new_index_queue()
    for owner, text in (("ann", "a1"), ("bob", "b1"), ("ann", "a2")):
        await queue.put(document(owner, text))
    await queue.refuse(await queue.claim(), "refused")  # ann's a1
    assert await queue.count_of("ann") == 2 and await queue.count_of("bob") == 1
    assert await queue.forget_user("ann") == 2
    restarted = await new_index_queue()
    assert await restarted.count_of("ann") == 0
    left = await restarted.claim()
    assert left.document.owner == "bob"
    await restarted.done(left)
    assert await restarted.claim() is None


async def test_the_ledger_keeps_each_document_as_last_recorded(new_index_ledger):
    ledger = await new_index_ledger()
    await ledger.record("ann", entry("a", None))
    await ledger.record("ann", entry("b", "doc-b"))
    await ledger.record("ann", entry("a", "doc-a"))  # its id, once known
    await ledger.record("bob", entry("c", "doc-c"))
    restarted = await new_index_ledger()
    assert [(e.file_source, e.doc_id) for e in await restarted.entries_of("ann")] == [
        ("a", "doc-a"),
        ("b", "doc-b"),
    ]
    assert restarted.owner_count() == 2
    await restarted.forget("ann")
    assert await restarted.entries_of("ann") == []
    assert [e.doc_id for e in await restarted.entries_of("bob")] == ["doc-c"]
    assert restarted.owner_count() == 1


async def test_the_ledger_says_which_documents_the_server_has(new_index_ledger):
    ledger = await new_index_ledger()
    assert not await ledger.holds("ann", "a")
    await ledger.record("ann", entry("a", None))
    assert await ledger.holds("ann", "a")
    restarted = await new_index_ledger()
    assert await restarted.holds("ann", "a")
    assert not await restarted.holds("bob", "a"), "another user's is not theirs"
    await restarted.record("ann", entry("b", "doc-b"))
    assert await restarted.holds("ann", "b")
    await restarted.forget("ann")
    assert not await restarted.holds("ann", "a")


async def test_the_ledger_drops_single_documents_deleted_on_the_server(new_index_ledger):
    ledger = await new_index_ledger()
    for source in ("a", "b", "c"):
        await ledger.record("ann", entry(source, f"doc-{source}"))
    await ledger.record("bob", entry("a", "doc-bob"))
    await ledger.drop("ann", {"a", "c"})
    restarted = await new_index_ledger()
    assert [e.file_source for e in await restarted.entries_of("ann")] == ["b"]
    assert not await restarted.holds("ann", "a") and await restarted.holds("bob", "a")
    await restarted.drop("ann", {"b"})
    assert await restarted.entries_of("ann") == []
    assert restarted.owner_count() == 1


async def test_the_ledger_says_which_of_some_documents_a_user_still_has(new_index_ledger):
    ledger = await new_index_ledger()
    assert await ledger.held("ann", {"a", "b"}) == set()
    for source in ("a", "b", "c"):
        await ledger.record("ann", entry(source, f"doc-{source}"))
    await ledger.record("bob", entry("d", "doc-d"))
    await ledger.drop("ann", {"b"})
    assert await ledger.held("ann", {"a", "b", "d", "x"}) == {"a"}
    restarted = await new_index_ledger()
    assert await restarted.held("ann", {"a", "b", "c"}) == {"a", "c"}
    assert await restarted.held("ann", set()) == set()
    assert await restarted.held("bob", {"a", "d"}) == {"d"}


async def test_a_users_documents_holding_some_words_are_dropped_alone(new_index_queue):
    queue = await new_index_queue()
    for owner, text in (
        ("ann", "my sister Olga lives in Porto"),
        ("bob", "Olga from Porto again"),
        ("ann", "we deploy on Fridays"),
        ("ann", "Olga visited Porto, set aside"),
    ):
        await queue.put(document(owner, text))
    await queue.refuse(await queue.claim(), "refused")  # ann's first, set aside
    assert await queue.forget_where("ann", lambda document: "Olga" in document.text) == 2
    restarted = await new_index_queue()
    assert await restarted.count_of("ann") == 1 and await restarted.count_of("bob") == 1
    texts = []
    while (item := await restarted.claim()) is not None:
        texts.append(item.document.text)
        await restarted.done(item)
    assert sorted(texts) == ["Olga from Porto again", "we deploy on Fridays"]
