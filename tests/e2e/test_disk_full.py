"""The app on a full disk: it starts, answers, says so in /status, and catches up later."""

import json

from bot.app import BotApp
from bot.storage.data_dir_lock import DataDirLock
from bot.storage.disk import START, DiskHealth
from tests.e2e.conftest import ALICE, say
from tests.fakes.channel import RecordingChannel
from tests.fakes.full_disk import FullDisk


async def test_a_full_disk_from_the_start_still_answers_and_the_session_reaches_the_disk_later(
    settings, fake_llm, monkeypatch, caplog
):
    settings.openai_base_url = fake_llm.base_url
    disk = FullDisk(monkeypatch, settings.data_dir.parent)
    lock = DataDirLock(settings.data_dir)
    lock.acquire()  # as `python -m bot` does: no traceback, one line
    assert lock.write_error is not None
    health = DiskHealth()
    health.failed(START, lock.write_error, "starting anyway")
    app = BotApp.build(settings, disk=health)
    await app.start()
    try:
        channel = RecordingChannel()
        await app.handle(say(ALICE, "first message"), channel)
        await app.handle(say(ALICE, "second message"), channel)
        assert channel.texts() == ["echo: first message", "echo: second message"]
        # The second turn went on from the first, which only memory holds.
        assert [m["content"] for m in fake_llm.requests[1]["messages"][1:]] == [
            "first message",
            "echo: first message",
            "second message",
        ]
        await app.handle(say(ALICE, "/status"), channel)
        assert "⚠ Disk full (No space left on device)" in channel.texts()[-1]
        assert "1 unsaved session(s)" in channel.texts()[-1]
        starts = [r for r in caplog.records if "data dir at start" in r.getMessage()]
        assert len(starts) == 1 and not any(r.exc_info for r in caplog.records)

        disk.full = False
        path = app.sessions.path_for(ALICE.session_key)
        await health.retry()  # what the app's retry task does every 30 s
        saved = json.loads(path.read_text())["messages"]
        assert [m["content"] for m in saved][-1] == "echo: second message"
        await app.handle(say(ALICE, "/status"), channel)
        assert "Disk" not in channel.texts()[-1]
    finally:
        disk.full = False
        await app.aclose()
        lock.release()
