"""`AppendedFile`: a file kept open for appends keeps every promise of `append_line_safely`."""

import errno
import os
import stat

import pytest

from bot.storage import atomic
from bot.storage.atomic import AppendedFile, UnsafePath, write_atomic


def test_lines_land_in_order_in_a_private_file(tmp_path):
    path = tmp_path / "data" / "inbox.jsonl"
    file = AppendedFile(path)
    for n in range(3):
        file.append(f'{{"n": {n}}}\n'.encode(), durable=n == 1)
    assert path.read_text() == '{"n": 0}\n{"n": 1}\n{"n": 2}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_replaced_meanwhile_gets_the_next_line(tmp_path):
    path = tmp_path / "inbox.jsonl"
    file = AppendedFile(path)
    file.append(b"old\n")
    write_atomic(path, b"compacted\n")  # as the inbox's compaction does
    file.append(b"next\n", durable=False)
    assert path.read_text() == "compacted\nnext\n"


def test_a_file_deleted_meanwhile_is_made_again(tmp_path):
    path = tmp_path / "usage.jsonl"
    file = AppendedFile(path)
    file.append(b"first\n", durable=False)
    path.unlink()
    file.append(b"second\n", durable=False)
    assert path.read_text() == "second\n"


def test_half_a_line_written_by_another_writer_is_not_joined_to_the_next(tmp_path):
    path = tmp_path / "inbox.jsonl"
    file = AppendedFile(path)
    file.append(b"mine\n", durable=False)
    with path.open("ab") as other:  # a batch cut short on another thread
        other.write(b'{"upd')
    file.append(b"next\n", durable=False)
    assert path.read_text().splitlines() == ["mine", '{"upd', "next"]


def test_after_a_write_cut_short_by_a_full_disk_the_next_line_starts_fresh(tmp_path, monkeypatch):
    path = tmp_path / "inbox.jsonl"
    file = AppendedFile(path)
    file.append(b"before\n", durable=False)
    real_write = atomic.write_all

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "write_all", half_then_full)
    with pytest.raises(OSError):
        file.append(b'{"done": 12345}\n', durable=False)
    monkeypatch.setattr(atomic, "write_all", real_write)
    file.append(b"after\n", durable=False)
    assert path.read_text().splitlines() == ["before", '{"done":', "after"]


def test_a_file_swapped_for_a_symlink_is_not_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not the bot's\n")
    path = tmp_path / "inbox.jsonl"
    file = AppendedFile(path)
    file.append(b"mine\n", durable=False)
    path.unlink()
    path.symlink_to(elsewhere)
    with pytest.raises(UnsafePath):
        file.append(b"next\n", durable=False)
    assert elsewhere.read_text() == "not the bot's\n"
