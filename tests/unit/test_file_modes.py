"""Everything the bot writes is for its own user only: files 0600, folders 0700, no symlinks.

The process sets a umask of 077 at start, but these tests run under an ordinary 022 one: the
modes must come from the code that creates each file and folder, not from the umask.
"""

import logging
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.adapters.telegram.inbox import UpdateInbox
from bot.conversation import Session
from bot.logging_setup import setup_logging
from bot.memory.files import UserFiles
from bot.memory.model import ItemType, new_item
from bot.memory.remember_switch import RememberSwitch
from bot.rag.documents import exchange_document
from bot.rag.ledger import IndexLedger
from bot.rag.model import LedgerEntry
from bot.rag.queue import IndexQueue
from bot.reminders import ReminderBook
from bot.settings import Settings
from bot.storage.atomic import UnsafePath, append_line_safely, write_atomic
from bot.storage.data_dir_lock import DataDirLock, DataDirRefused
from bot.storage.sessions import JsonSessionStore

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def ordinary_umask():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def not_private(root) -> list[str]:
    """Every file under `root` (itself included) not 0600, every folder not 0700."""
    found = [] if mode(root) == 0o700 else [f"{root} {mode(root):o}"]
    for path in root.rglob("*"):
        wanted = 0o700 if path.is_dir() else 0o600
        if path.is_symlink() or mode(path) != wanted:
            found.append(f"{path.relative_to(root)} {mode(path):o}")
    return found


async def test_everything_the_bot_writes_in_its_data_dir_is_private(tmp_path):
    data = tmp_path / "new" / "data"  # the bot makes the data dir and its missing parent
    lock = DataDirLock(data)
    lock.acquire()
    try:
        sessions = JsonSessionStore(data / "sessions")
        await sessions.save(Session(key="telegram:1"))
        await sessions.save(Session(key="telegram:2"))
        await sessions.archive("telegram:2")

        inbox = UpdateInbox(data / "telegram" / "inbox.jsonl", lambda update: True)
        inbox.received([{"update_id": 1, "message": {"text": "hi"}}])
        inbox.started(1)

        files = UserFiles(data / "memory", "1")
        item = new_item(ItemType.FACT, "The user likes tea.", source="t", confidence=0.9)
        files.append([item])
        semantic = files.path_for(item)
        semantic.write_bytes(semantic.read_bytes() + b"{damaged line\n")
        files.load(NOW)  # sets the damaged line aside in semantic.jsonl.damaged
        await RememberSwitch(data / "memory" / "remember-off.json").set_remembering("1", False)

        queue = IndexQueue(data / "rag" / "queue")
        await queue.put(exchange_document("1", "telegram:1", "q", "a", NOW))
        await queue.put(exchange_document("1", "telegram:1", "q2", "a2", NOW))
        queue.set_aside(queue.oldest(), "HTTP 400: refused")
        entry = LedgerEntry(
            file_source="f", doc_id=None, track_id=None, chat_key="telegram:1", indexed_at=NOW
        )
        await IndexLedger(data / "rag" / "ledger").record("1", entry)

        book = ReminderBook(data / "reminders" / "reminders.json")
        await book.set_timezone("1", "Europe/Berlin")

        setup_logging("INFO", [], data / "logs" / "bot.log")
        logging.getLogger("bot.test").warning("a line in the log file")
    finally:
        lock.release()
        for handler in list(logging.getLogger().handlers):
            logging.getLogger().removeHandler(handler)
            handler.close()

    names = {path.name for path in data.rglob("*")}
    expected = {
        *("bot.lock", "inbox.jsonl", "semantic.jsonl.damaged", "bot.log", "archive"),
        "reminders.json",
    }
    assert expected <= names and any(n.endswith(".reason.txt") for n in names)
    assert not_private(data) == []
    assert mode(tmp_path / "new") == 0o700


def test_an_append_tightens_a_file_an_older_version_left_readable(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_text("{}\n")
    path.chmod(0o644)
    append_line_safely(path, b"{}\n")
    assert mode(path) == 0o600


def test_appending_through_a_symlink_is_refused_and_logged(tmp_path, caplog):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not the bot's\n")
    link = tmp_path / "data" / "inbox.jsonl"
    link.parent.mkdir()
    link.symlink_to(elsewhere)
    with pytest.raises(UnsafePath):
        append_line_safely(link, b"{}\n")
    assert elsewhere.read_text() == "not the bot's\n"
    assert f"refused to write {link}: it is a symbolic link" in caplog.text


def test_an_atomic_write_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    link = tmp_path / "session.json"
    link.symlink_to(elsewhere)
    write_atomic(link, b'{"new": true}')
    assert elsewhere.read_text() == "{}"
    assert not link.is_symlink() and mode(link) == 0o600


def test_a_symlinked_lock_file_stops_the_start_with_a_clear_message(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "bot.lock").symlink_to(elsewhere)
    with pytest.raises(DataDirRefused, match="symbolic link"):
        DataDirLock(tmp_path / "data").acquire()


@pytest.mark.parametrize(
    "write",
    [
        lambda path: write_atomic(path, b"{}"),
        lambda path: append_line_safely(path, b"{}\n"),
    ],
    ids=["atomic write", "append"],
)
def test_a_symlinked_folder_inside_the_data_dir_is_not_written_through(tmp_path, caplog, write):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / "sessions").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePath):
        write(data / "sessions" / "archive" / "telegram%3A1.json")
    assert list(elsewhere.iterdir()) == []
    assert "a folder on its way is a symbolic link" in caplog.text


def test_the_data_dir_itself_may_be_a_link(tmp_path, monkeypatch):
    (tmp_path / "volume").mkdir()
    (tmp_path / "data").symlink_to(tmp_path / "volume", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    settings = Settings(_env_file=None, data_dir=Path("data"))
    assert settings.data_dir == tmp_path / "volume"
    write_atomic(settings.data_dir / "sessions" / "s.json", b"{}")
    assert (tmp_path / "volume" / "sessions" / "s.json").read_bytes() == b"{}"
