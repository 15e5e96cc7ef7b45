"""The data dir lock: one bot on files per folder; bots on PostgreSQL share it."""

import pytest

from bot.storage.data_dir_lock import DataDirInUse, DataDirLock


def test_bots_on_postgres_share_a_data_dir_and_keep_a_bot_on_files_out(tmp_path):
    first, second = DataDirLock(tmp_path, shared=True), DataDirLock(tmp_path, shared=True)
    first.acquire()
    second.acquire()  # a second process serving the same bot: not stopped
    with pytest.raises(DataDirInUse, match="Bots using DATABASE_URL are running"):
        DataDirLock(tmp_path).acquire()
    first.release()
    second.release()
    DataDirLock(tmp_path).acquire()


def test_a_bot_on_files_keeps_bots_on_postgres_out(tmp_path):
    alone = DataDirLock(tmp_path)
    alone.acquire()
    with pytest.raises(DataDirInUse, match=r"Another bot \(pid \d+\) is running"):
        DataDirLock(tmp_path, shared=True).acquire()
    alone.release()
