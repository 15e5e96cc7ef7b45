"""The durable queue, the index worker and forgetting, with an in-memory LightRAG."""

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import bot.rag.indexer as indexer_module
from bot.config import RuntimeConfigStore
from bot.conversation import MemoryScope
from bot.media.library import DocumentLibrary
from bot.rag.circuit import CircuitBreaker
from bot.rag.documents import exchange_document, shared_file_piece, shared_pieces_prefix
from bot.rag.indexer import RagIndexer
from bot.rag.ledger import IndexLedger
from bot.rag.long_term import LongTermDocuments
from bot.rag.model import FoundText, LedgerEntry, RagUnavailable, StoredDocument
from bot.rag.queue import IndexQueue
from tests.fakes.rag import FakeRag
from tests.fakes.waiting import wait_until

AT = datetime(2026, 1, 1, tzinfo=UTC)


def doc(owner="111", text="Where is Redis? On port 6380."):
    return exchange_document(owner, f"t:{owner}", text, "answer text", AT)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rag": {"enabled": True, "indexRetryMaxSeconds": 1}}))
    return RuntimeConfigStore(path)


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    monkeypatch.setattr(indexer_module, "FIRST_BACKOFF_SECONDS", 0.02)


async def test_queue_survives_a_restart_in_arrival_order(tmp_path):
    queue = IndexQueue(tmp_path / "queue")
    for i in range(3):
        await queue.put(doc(text=f"message number {i}"))
    reopened = IndexQueue(tmp_path / "queue")
    assert reopened.depth == 3
    first = reopened.oldest()
    assert "message number 0" in first.document.text
    reopened.remove(first)
    assert "message number 1" in reopened.oldest().document.text
    assert reopened.depth == 2


async def test_an_unreadable_queue_file_is_set_aside_not_fatal(tmp_path):
    queue = IndexQueue(tmp_path / "queue")
    (tmp_path / "queue" / "00000000000000000001-bad.json").write_text("{half")
    await queue.put(doc())
    assert queue.oldest().document.owner == "111"
    assert queue.failed_count() == 1


async def test_worker_sends_in_order_and_records_each_document(tmp_path, config):
    rag, ledger = FakeRag(), IndexLedger(tmp_path / "ledger")
    worker = RagIndexer(IndexQueue(tmp_path / "queue"), rag, ledger, config)
    worker.start()
    for i in range(5):
        await worker.enqueue(doc(text=f"exchange {i} with enough text"))
    await wait_until(lambda: worker.queue.depth == 0, what="the queue emptied")
    assert [d.text.split("\n")[1] for d in rag.received] == [
        f"User: exchange {i} with enough text" for i in range(5)
    ]
    # A document leaves the queue once the server has it; its server id is recorded later,
    # when the upload settles in the background: wait for all five ids, then check them.
    await wait_until(
        lambda: [e.doc_id is not None for e in ledger.entries("111")] == [True] * 5,
        what="every upload's server id recorded",
    )
    assert [e.doc_id for e in ledger.entries("111")] == [f"doc-{i}" for i in range(1, 6)]
    await worker.stop(1)


async def test_a_document_filed_again_after_a_crash_is_not_uploaded_again(tmp_path, config):
    """The inbox replays a message whose turn a `kill -9` cut short: its document is read and
    filed again. Pieces the server already took are not sent a second time."""
    rag = FakeRag()
    text = " ".join(f"Clause {n}: the tenant keeps the garden tidy." for n in range(200))

    async def file_once() -> None:
        worker = RagIndexer(
            IndexQueue(tmp_path / "queue"), rag, IndexLedger(tmp_path / "ledger"), config
        )
        worker.start()
        await DocumentLibrary(worker).file(MemoryScope("111", "111"), "t:111", "a.txt", text, AT)
        await wait_until(lambda: worker.queue.depth == 0, what="the queue emptied")
        await worker.stop(1)

    await file_once()
    sent = rag.attempts
    assert sent > 2
    await file_once()  # after the restart, the same message filed again
    assert rag.attempts == sent


async def test_documents_queued_while_down_arrive_when_the_server_is_back(tmp_path, config):
    rag = FakeRag()
    rag.down = True
    worker = RagIndexer(IndexQueue(tmp_path / "queue"), rag, IndexLedger(tmp_path / "l"), config)
    worker.start()
    for i in range(3):
        await worker.enqueue(doc(text=f"during the outage {i}"))
    await wait_until(lambda: rag.attempts >= 2)  # tried, and tried again after a backoff
    assert rag.received == [] and worker.queue.depth == 3
    rag.down = False
    await wait_until(lambda: len(rag.received) == 3, within=5)
    await worker.stop(1)


async def test_new_messages_during_an_outage_neither_prompt_attempts_nor_lengthen_the_wait(
    tmp_path,
):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rag": {"enabled": True, "indexRetryMaxSeconds": 60}}))
    rag = FakeRag()
    rag.down = True
    worker = RagIndexer(
        IndexQueue(tmp_path / "q"), rag, IndexLedger(tmp_path / "l"), RuntimeConfigStore(path)
    )
    worker.start()
    await worker.enqueue(doc(text="the first during the outage"))
    # Five failed rounds (waits of 0.02 .. 0.32 s): the next two waits are ~0.32 and ~0.64 s,
    # so however slow the 20 enqueues below are on a busy machine, within ~1 s at most one
    # attempt is due on its own.
    await wait_until(lambda: rag.attempts >= 5)
    attempts = rag.attempts
    for i in range(20):
        await worker.enqueue(doc(text=f"message {i} during the outage"))
        await asyncio.sleep(0)
    assert rag.attempts <= attempts + 1, "a new message is no reason to try again"

    rag.down = False
    started = asyncio.get_running_loop().time()
    await wait_until(lambda: len(rag.received) == 21, within=5)
    # Twenty doublings would be a minute (indexRetryMaxSeconds); the pending wait is < 1.6 s.
    assert asyncio.get_running_loop().time() - started < 3, "the wait stayed short"
    await worker.stop(1)


async def test_a_call_that_reaches_lightrag_again_ends_the_indexers_wait(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rag": {"enabled": True, "indexRetryMaxSeconds": 60}}))
    monkeypatch.setattr(indexer_module, "FIRST_BACKOFF_SECONDS", 30.0)  # the next try is far off
    rag = FakeRag()
    rag.down = True
    breaker = CircuitBreaker()
    worker = RagIndexer(
        IndexQueue(tmp_path / "q"), rag, IndexLedger(tmp_path / "l"), RuntimeConfigStore(path)
    )
    breaker.on_recovery = worker.server_is_back
    worker.start()
    await worker.enqueue(doc(text="queued while LightRAG is down"))
    await wait_until(lambda: rag.attempts == 1)
    breaker.record_failure("Connection refused", 3, 30, severe=False)
    rag.down = False
    breaker.record_success()  # e.g. a user's query got through
    await wait_until(lambda: len(rag.received) == 1, within=1)
    await worker.stop(1)


async def test_a_document_refused_for_good_is_set_aside_and_the_rest_go_on(tmp_path, config):
    rag = FakeRag()
    worker = RagIndexer(IndexQueue(tmp_path / "queue"), rag, IndexLedger(tmp_path / "l"), config)
    worker.start()
    await worker.enqueue(doc(text="REJECT me"))
    await worker.enqueue(doc(text="a good one"))
    await wait_until(lambda: len(rag.received) == 1)
    assert worker.queue.failed_count() == 1
    reasons = list((tmp_path / "failed").glob("*.reason.txt"))
    assert "HTTP 422" in reasons[0].read_text()
    await worker.stop(1)


async def test_shutdown_keeps_unsent_documents_on_disk_for_the_next_start(tmp_path, config):
    rag = FakeRag()
    rag.down = True
    queue_dir = tmp_path / "queue"
    worker = RagIndexer(IndexQueue(queue_dir), rag, IndexLedger(tmp_path / "l"), config)
    worker.start()
    await worker.enqueue(doc(text="not sent before shutdown"))
    await worker.stop(0.3)
    assert IndexQueue(queue_dir).depth == 1

    rag.down = False
    restarted = RagIndexer(IndexQueue(queue_dir), rag, IndexLedger(tmp_path / "l"), config)
    restarted.start()
    await wait_until(lambda: len(rag.received) == 1)
    await restarted.stop(1)
    assert IndexQueue(queue_dir).depth == 0


async def test_disabled_rag_sends_nothing(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rag": {"enabled": False}}))
    rag = FakeRag()
    worker = RagIndexer(
        IndexQueue(tmp_path / "q"), rag, IndexLedger(tmp_path / "l"), RuntimeConfigStore(path)
    )
    worker.start()
    await worker.enqueue(doc())
    await worker.stop(1)  # the worker saw the document, and ran to its end without sending it
    assert rag.attempts == 0 and rag.received == [] and worker.queue.depth == 1


async def test_ledger_survives_a_torn_last_line(tmp_path):
    ledger = IndexLedger(tmp_path)
    entry = LedgerEntry(file_source="a", doc_id="d1", track_id=None, chat_key="c", indexed_at=AT)
    await ledger.record("111", entry)
    with ledger.path_for("111").open("a") as f:
        f.write('{"file_source": "torn')
    await ledger.record("111", entry.model_copy(update={"file_source": "b", "doc_id": "d2"}))
    assert [e.doc_id for e in ledger.entries("111")] == ["d1", "d2"]


async def test_a_later_line_of_a_document_updates_it(tmp_path):
    ledger = IndexLedger(tmp_path)
    entry = LedgerEntry(file_source="a", doc_id=None, track_id="t", chat_key="c", indexed_at=AT)
    await ledger.record("111", entry)
    await ledger.record("111", entry.model_copy(update={"doc_id": "doc-7"}))
    assert [(e.file_source, e.doc_id) for e in ledger.entries("111")] == [("a", "doc-7")]


async def test_the_ledger_counts_the_users_sharing_the_server(tmp_path):
    ledger = IndexLedger(tmp_path)
    entry = LedgerEntry(file_source="a", doc_id=None, track_id="t", chat_key="c", indexed_at=AT)
    assert ledger.owner_count() == 0
    for owner in ("111", "222", "telegram:-100", "111"):
        await ledger.record(owner, entry)
    assert ledger.owner_count() == 3
    assert IndexLedger(tmp_path).owner_count() == 3, "after a restart"
    ledger.clear("222")
    assert ledger.owner_count() == 2


async def test_forget_removes_queued_and_deletes_recorded_and_discovered_documents(tmp_path):
    rag = FakeRag()
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    await queue.put(doc("111"))
    await queue.put(doc("222"))
    for doc_id in ("doc-a", "doc-b"):
        await ledger.record(
            "111",
            LedgerEntry(
                file_source=f"f-{doc_id}", doc_id=doc_id, track_id=None, chat_key="c", indexed_at=AT
            ),
        )
    rag.on_server = [StoredDocument("doc-b", "x"), StoredDocument("doc-lost-id", "y")]
    rag.busy_deletes = 1
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.count_for("111") == 3
    assert await store.forget_user("111") == 4
    assert rag.deleted == [["doc-a", "doc-b", "doc-lost-id"]]
    assert await store.count_for("111") == 0
    assert [item.document.owner for item in queue.all()] == ["222"]
    assert "LightRAG's cache may still hold summaries" in store.traces_left("111")
    assert store.traces_left("111") is None, "said once, after the deletion it is about"


async def test_forget_deletes_the_users_documents_set_aside_as_refused(tmp_path):
    rag = FakeRag()
    rag.down = True
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    for owner in ("111", "222"):
        await queue.put(doc(owner, text=f"Refused words of {owner}"))
        queue.set_aside(queue.oldest(), "HTTP 413: too large")
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.count_for("111") == 1
    assert await store.forget_user("111") == 1
    left = " ".join(p.read_text() for p in (tmp_path / "failed").iterdir())
    assert "of 111" not in left and "of 222" in left
    assert len(list((tmp_path / "failed").iterdir())) == 2, "the other's document and reason"


async def test_forget_without_lightrag_touches_no_server(tmp_path):
    rag = FakeRag()
    rag.down = True
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    await queue.put(doc("111"))
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.forget_user("111") == 1, "queued documents go without a server"
    assert store.traces_left("111") is None, "nothing reached LightRAG, nothing stays there"
    await ledger.record(
        "111", LedgerEntry(file_source="x", doc_id="d", track_id=None, chat_key="c", indexed_at=AT)
    )
    with pytest.raises(RagUnavailable):
        await store.forget_user("111")
    assert [e.doc_id for e in ledger.entries("111")] == ["d"], "kept until really deleted"


def entry(source, doc_id):
    return LedgerEntry(
        file_source=source, doc_id=doc_id, track_id=None, chat_key="c", indexed_at=AT
    )


async def test_forgetting_by_words_deletes_only_the_documents_holding_them(tmp_path):
    rag = FakeRag()
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    for source, doc_id in (("conv_a.txt", "doc-a"), ("conv_b.txt", "doc-b"), ("conv_c.txt", None)):
        await ledger.record("111", entry(source, doc_id))
    rag.about = [
        FoundText("conv_a.txt", "User: my sister Olga lives in Porto"),
        FoundText("conv_b.txt", "User: we deploy on Fridays"),
        FoundText("conv_c.txt", "User: Olga moved to Porto last year"),
        FoundText("doc_x.txt", "Document, part 1: Olga's gallery in Porto"),  # a shared one
    ]
    rag.on_server = [StoredDocument("doc-c", "conv_c.txt")]  # its id was never recorded
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.forget_holding("111", "Olga Porto", lambda text: "Olga" in text) == 2
    assert rag.deleted == [["doc-a", "doc-c"]]
    assert [e.file_source for e in ledger.entries("111")] == ["conv_b.txt"]
    assert "LightRAG's cache may still hold summaries" in store.traces_left("111")

    rag.down = True
    with pytest.raises(RagUnavailable):
        await store.forget_holding("111", "Fridays", lambda text: True)
    assert [e.file_source for e in ledger.entries("111")] == ["conv_b.txt"], "kept"


async def test_queued_documents_holding_the_words_go_even_while_lightrag_is_down(tmp_path):
    rag = FakeRag()
    rag.down = True
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    await queue.put(doc("111", text="my sister Olga lives in Porto"))
    await queue.put(doc("111", text="we deploy on Fridays"))
    await queue.put(shared_file_piece("111", "c1", "Document, part 1:", "Olga's gallery", AT))
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.forget_holding("111", "Olga Porto", lambda text: "Olga" in text) == 1
    left = [item.document.text for item in queue.all()]
    assert len(left) == 2 and "Olga's gallery" in left[1], "a shared document goes with its note"
    assert rag.deleted == [], "nothing of this user on the server: no request"


async def test_a_shared_documents_pieces_are_forgotten_by_their_names(tmp_path):
    rag = FakeRag()
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    prefix = shared_pieces_prefix("111", AT)
    for n, source in enumerate([f"{prefix}c1_aa.txt", f"{prefix}c1_bb.txt", "doc_other.txt"]):
        await ledger.record("111", entry(source, f"doc-{n}"))
    await queue.put(shared_file_piece("111", "c1", "Document, part 3 of 3:", "Text.", AT))
    await queue.put(doc("111"))
    store = LongTermDocuments(queue, ledger, rag)
    assert await store.forget_shared_at("111", prefix) == 3, "two sent, one still queued"
    assert [item.document.file_source[:4] for item in queue.all()] == ["conv"]
    assert rag.deleted == [["doc-0", "doc-1"]]
    assert [e.file_source for e in ledger.entries("111")] == ["doc_other.txt"]
    assert await store.forget_shared_at("111", prefix) == 0


async def test_an_exchange_identical_to_another_users_is_indexed_as_its_own(tmp_path, config):
    rag, ledger = FakeRag(), IndexLedger(tmp_path / "ledger")
    worker = RagIndexer(IndexQueue(tmp_path / "queue"), rag, ledger, config)
    worker.start()
    same = "What is the office wifi password? It is on the fridge."
    await worker.enqueue(doc("111", same))
    await worker.enqueue(doc("222", same))  # another user, the very same words
    await worker.enqueue(doc("111", same))  # the first user again: already remembered
    await wait_until(lambda: worker.queue.depth == 0)
    await worker.stop(1)
    assert [d.owner for d in rag.received] == ["111", "222"]
    assert rag.received[1].text.endswith("\nParticipant: 222")
    assert [e.doc_id for e in ledger.entries("222")] == ["dup-x", "doc-2"]
    assert [e.doc_id for e in ledger.entries("111")] == ["doc-1", "dup-x"]


async def test_turning_rag_off_stops_status_checks_until_it_is_back_on(
    tmp_path, config, monkeypatch
):
    monkeypatch.setattr(indexer_module, "SETTLE_DISABLED_RECHECK_SECONDS", 0.02)
    monkeypatch.setattr(indexer_module, "SETTLE_PAUSES", (0.02,) * 200)

    class SlowToRegister(FakeRag):
        """Knows no upload's status until `registered`; counts every look."""

        registered = False
        looks = 0

        async def upload_status(self, track_id):
            self.looks += 1
            return await super().upload_status(track_id) if self.registered else None

    class CountedConfig(RuntimeConfigStore):
        """Counts how often the worker looks at the config: a settle on hold looks at it
        every SETTLE_DISABLED_RECHECK_SECONDS."""

        reads = 0

        def current(self):
            self.reads += 1
            return super().current()

    config = CountedConfig(config.path)
    rag, ledger = SlowToRegister(), IndexLedger(tmp_path / "ledger")
    worker = RagIndexer(IndexQueue(tmp_path / "queue"), rag, ledger, config)
    worker.start()
    await worker.enqueue(doc())
    await wait_until(lambda: rag.looks > 0)

    config.path.write_text(json.dumps({"rag": {"enabled": False}}))
    # A look makes no pause, so none is under way now.
    looks_when_off, reads_when_off = rag.looks, config.reads
    # The settle saw RAG off and has checked four times more since.
    await wait_until(lambda: config.reads >= reads_when_off + 5)
    assert rag.looks == looks_when_off, "no request reaches LightRAG while RAG is off"

    rag.registered = True
    config.path.write_text(json.dumps({"rag": {"enabled": True, "indexRetryMaxSeconds": 1}}))
    await wait_until(lambda: [e.doc_id for e in ledger.entries("111")] == ["doc-1"])
    await worker.stop(1)


async def test_counting_a_users_queued_documents_reads_no_queue_file(tmp_path, monkeypatch):
    queue, ledger = IndexQueue(tmp_path / "q"), IndexLedger(tmp_path / "l")
    for n in range(300):
        await queue.put(doc("111" if n % 3 else "222", f"exchange {n}"))
    restarted = IndexQueue(tmp_path / "q")  # owners are read once, at start
    taken = restarted.oldest()
    assert taken is not None
    restarted.remove(taken)
    reads = []
    real_read = Path.read_bytes

    def spy(path):
        reads.append(path)
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", spy)
    store = LongTermDocuments(restarted, ledger, FakeRag())
    assert await store.count_for("111") == 200
    assert await store.count_for("222") == 99  # the oldest, one of 222's, was sent
    assert [p for p in reads if p.is_relative_to(tmp_path / "q")] == []
