"""A full disk: nothing is lost that fits in memory, one log line per episode, retried."""

import errno
import logging
from datetime import UTC, datetime

from bot.conversation import ChatMessage
from bot.conversation.scope import MemoryScope
from bot.memory.remember_switch import RememberSwitch
from bot.rag.documents import exchange_document
from bot.rag.model import RagDocument
from bot.rag.queue import IndexQueue
from bot.storage.data_dir_lock import DataDirLock
from bot.storage.disk import DiskHealth
from bot.storage.sessions import JsonSessionStore
from tests.fakes.full_disk import FullDisk

SCOPE = MemoryScope(owner="u1", speaker_id="u1")


def disk_errors(caplog, what):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bot.storage.disk" and r.levelname == "ERROR" and what in r.getMessage()
    ]


def test_the_data_dir_lock_is_taken_even_when_the_disk_is_full(tmp_path, monkeypatch):
    FullDisk(monkeypatch, tmp_path)
    lock = DataDirLock(tmp_path / "data")
    lock.acquire()  # no traceback: the folder cannot even be made
    assert lock.write_error is not None and lock.write_error.errno == errno.ENOSPC
    lock.release()


def test_the_lock_is_held_when_only_the_pid_cannot_be_written(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    FullDisk(monkeypatch, tmp_path)
    lock = DataDirLock(tmp_path / "data")
    lock.acquire()
    assert lock.write_error is not None and lock._fd is not None
    lock.release()


async def test_a_refused_session_stays_in_memory_and_is_written_on_the_next_save(
    tmp_path, monkeypatch, caplog
):
    disk = FullDisk(monkeypatch, tmp_path)
    health = DiskHealth()
    store = JsonSessionStore(tmp_path / "sessions", cache_size=1, disk=health)
    alice = await store.load("alice")
    alice.messages.append(ChatMessage.user("kept while the disk is full"))
    with caplog.at_level(logging.INFO):
        await store.save(alice)
        await store.load("bob")  # pushes alice out of the one-entry cache
        bob = await store.load("bob")
        await store.save(bob)  # a second refused attempt: no second log line
    assert disk.refused >= 3
    assert not store.path_for("alice").exists()
    assert len(disk_errors(caplog, "sessions")) == 1
    assert "No space left on device" in disk_errors(caplog, "sessions")[0]
    again = await store.load("alice")
    assert again is alice  # the next turn goes on from what was said, not from the disk
    lines = await health.status_lines(SCOPE)
    assert "Disk full" in lines[0] and "2 unsaved session(s)" in lines[0]

    disk.full = False
    carol = await store.load("carol")
    await store.save(carol)  # any save retries what the disk refused before
    saved = JsonSessionStore(tmp_path / "sessions")
    assert [m.content for m in (await saved.load("alice")).messages] == [
        "kept while the disk is full"
    ]
    assert store.path_for("bob").exists()
    assert await health.status_lines(SCOPE) == []


async def test_refused_sessions_are_bounded(tmp_path, monkeypatch, caplog):
    FullDisk(monkeypatch, tmp_path)
    store = JsonSessionStore(tmp_path / "sessions", max_unsaved=2)
    for key in ("a", "b", "c"):
        await store.save(await store.load(key))
    assert store.unwritten() == 2


def document(owner: str, text: str) -> RagDocument:
    return exchange_document(owner, f"test:{owner}", text, "ok", datetime.now(UTC))


async def test_a_refused_queue_document_waits_in_memory_and_reaches_the_disk_on_retry(
    tmp_path, monkeypatch, caplog
):
    disk = FullDisk(monkeypatch, tmp_path)
    health = DiskHealth()
    queue = IndexQueue(tmp_path / "rag" / "queue", health)
    woken = []
    queue.on_written = lambda: woken.append(True)
    with caplog.at_level(logging.INFO):
        await queue.put(document("u1", "first"))
        await queue.put(document("u1", "second"))
    assert queue.depth == 2 and queue.unwritten() == 2
    assert len(disk_errors(caplog, "index queue")) == 1
    assert "1 document" not in (await health.status_lines(SCOPE))[0]
    assert "2 document(s) for the index queue" in (await health.status_lines(SCOPE))[0]

    disk.full = False
    await health.retry()
    assert ["first" in item.document.text for item in queue.all()] == [True, False]
    assert queue.unwritten() == 0 and woken == [True]
    assert await health.status_lines(SCOPE) == []


async def test_forget_drops_documents_the_disk_refused(tmp_path, monkeypatch):
    FullDisk(monkeypatch, tmp_path)
    queue = IndexQueue(tmp_path / "queue")
    await queue.put(document("u1", "mine"))
    await queue.put(document("u2", "theirs"))
    assert queue.forget_unwritten("u1") == 1
    assert queue.depth == 1 and queue.unwritten() == 1


async def test_a_remember_choice_the_disk_refuses_is_not_applied_and_says_so(tmp_path, monkeypatch):
    switch = RememberSwitch(tmp_path / "remember-off.json")
    FullDisk(monkeypatch, tmp_path)
    assert await switch.set_remembering("u1", False) is False
    assert switch.is_remembering("u1"), "no choice that a restart would undo"
