import json

from bot.adapters.telegram.inbox import COMPACT_AFTER_LINES, UpdateInbox
from tests.fakes.full_disk import FullDisk


def update(update_id, user=1, text="hi"):
    sender = {"id": user, "is_bot": False, "first_name": "U"}
    return {"update_id": update_id, "message": {"message_id": update_id, "from": sender,
            "chat": {"id": user, "type": "private"}, "date": 1, "text": text}}  # fmt: skip


def allowed(data):
    return data["message"]["from"]["id"] in (1, 2)


def test_fetched_updates_stay_pending_until_done_even_across_restarts(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(10), update(11, user=2), update(12)])
    inbox.done(11)
    reopened = UpdateInbox(path, allowed)
    assert [u["update_id"] for u in reopened.pending()] == [10, 12]
    assert reopened.last_update_id == 12


def test_strangers_messages_never_reach_the_disk(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(5, user=999, text="stranger's secret"), update(6)])
    assert "stranger's secret" not in path.read_text()
    assert [u["update_id"] for u in inbox.pending()] == [6]
    assert UpdateInbox(path, allowed).last_update_id == 6


def test_a_redelivered_update_is_not_kept_twice(tmp_path):
    inbox = UpdateInbox(tmp_path / "inbox.jsonl", allowed)
    assert inbox.received([update(7)]) == [7]
    assert inbox.received([update(7)]) == [], "still pending"
    inbox.done(7)
    assert inbox.received([update(7), update(8)]) == [8]
    assert [u["update_id"] for u in inbox.pending()] == [8]
    assert UpdateInbox(tmp_path / "inbox.jsonl", allowed).received([update(7)]) == []


def test_an_update_arriving_out_of_order_is_still_kept(tmp_path):
    inbox = UpdateInbox(tmp_path / "inbox.jsonl", allowed)
    assert inbox.received([update(11)]) == [11]
    assert inbox.received([update(10)]) == [10], "webhook posts need not arrive in order"
    assert [u["update_id"] for u in inbox.pending()] == [10, 11]
    assert inbox.last_update_id == 11


async def test_take_keeps_an_update_on_disk_before_handing_it_on_once(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    handed = []

    async def deliver(data):
        handed.append(data["update_id"])
        assert [u["update_id"] for u in UpdateInbox(path, allowed).pending()] == [20]

    await inbox.open(deliver)
    await inbox.take([update(20)])
    await inbox.take([update(20)])  # Telegram posted it again
    await inbox.take([update(21, user=999, text="stranger")])
    assert handed == [20, 21]
    assert "stranger" not in path.read_text()


def test_compaction_drops_handled_updates_but_keeps_the_offset(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    for n in range(1, 601):
        inbox.received([update(n)])
        inbox.done(n)
    inbox.received([update(601)])
    lines = path.read_text().splitlines()
    assert len(lines) < 300, "compacted after 500 handled updates (1201 lines without)"
    reopened = UpdateInbox(path, allowed)
    assert [u["update_id"] for u in reopened.pending()] == [601]
    assert reopened.last_update_id == 601


def test_a_damaged_line_is_skipped(tmp_path):
    path = tmp_path / "inbox.jsonl"
    path.write_text(json.dumps({"update": update(3)}) + "\n{torn\n")
    inbox = UpdateInbox(path, allowed)
    assert [u["update_id"] for u in inbox.pending()] == [3]


def test_half_an_emoji_is_kept_and_read_back(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(9, text="half \ud83d emoji")])
    assert path.read_bytes().isascii()
    assert UpdateInbox(path, allowed).pending()[0]["message"]["text"] == "half \ud83d emoji"


def test_each_start_of_a_turn_is_counted_on_disk_before_it_runs(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(30), update(31)])
    assert inbox.started(30) == 1
    # kill -9 during the turn: nothing closed, nothing marked done; each start compacts
    assert UpdateInbox(path, allowed).started(30) == 2
    reopened = UpdateInbox(path, allowed)
    assert reopened.started(30) == 3, "counted across restarts and compactions"
    assert reopened.started(31) == 1, "counted per update"
    assert [u["update_id"] for u in reopened.pending()] == [30, 31]


def test_a_handled_update_leaves_no_count_behind(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(40)])
    inbox.started(40)
    inbox.done(40)
    assert inbox.started(40) == 0, "not in the inbox: nothing to count"
    assert inbox.started(999) == 0
    assert UpdateInbox(path, allowed).pending() == []


def test_a_start_the_disk_refuses_is_logged_and_the_turn_still_runs(tmp_path, caplog):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(50)])
    path.rename(tmp_path / "moved.jsonl")
    path.symlink_to(tmp_path / "moved.jsonl")  # the bot writes through no symlink
    assert inbox.started(50) == 1
    assert inbox.started(50) == 2, "still counted in memory"
    assert "could not write the inbox" in caplog.text


async def test_forgetting_a_user_compacts_their_handled_messages_away(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(1, text="Zorb one"), update(2, user=2, text="other's"), update(3)])
    inbox.done(1)
    inbox.done(2)
    assert await inbox.count_for("1") == 1, "the pending one is not counted"
    assert await inbox.forget_user("1") == 1
    assert "Zorb" not in path.read_text()
    assert [u["update_id"] for u in UpdateInbox(path, allowed).pending()] == [3]
    assert await inbox.count_for("1") == 0


def test_an_unfinished_preview_is_remembered_across_a_restart_until_final_or_done(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(1), update(2)])
    inbox.preview_shown(1, [501])
    inbox.preview_shown(1, [501, 502])
    inbox.preview_shown(2, [601])
    inbox.preview_shown(2, [])  # its answer was final
    reopened = UpdateInbox(path, allowed)  # compacted at start
    assert reopened.leftover_preview(1) == [501, 502]
    assert reopened.leftover_preview(2) == []
    assert UpdateInbox(path, allowed).leftover_preview(1) == [501, 502], "kept by compaction"
    reopened.done(1)
    assert UpdateInbox(path, allowed).leftover_preview(1) == []


def test_a_delivered_reply_is_kept_with_its_update_until_done(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(1), update(2)])
    inbox.answered(1, "the reply, \ud83d half an emoji")
    inbox.answered(3, "not ours")  # not pending: ignored
    assert inbox.answer_of(1) == "the reply, \ud83d half an emoji"
    assert inbox.answer_of(2) is None and inbox.answer_of(3) is None
    reopened = UpdateInbox(path, allowed)  # read from the lines, then compacted
    assert reopened.answer_of(1) == "the reply, \ud83d half an emoji"
    assert UpdateInbox(path, allowed).answer_of(1) == inbox.answer_of(1), "kept by compaction"
    reopened.done(1)
    assert reopened.answer_of(1) is None
    assert UpdateInbox(path, allowed).answer_of(1) is None


def test_strangers_updates_do_not_grow_the_inbox_without_bound(tmp_path):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    inbox.received([update(1)])  # one of ours, still pending
    for n in range(2, 2_502):
        inbox.received([update(n, user=999)])
    lines = path.read_text().splitlines()
    assert len(lines) <= COMPACT_AFTER_LINES + 2, f"{len(lines)} lines for 2500 strangers"
    reopened = UpdateInbox(path, allowed)
    assert [u["update_id"] for u in reopened.pending()] == [1]
    assert reopened.last_update_id == 2_501


def test_a_full_disk_costs_the_inbox_its_replay_not_the_answer(tmp_path, monkeypatch, caplog):
    path = tmp_path / "inbox.jsonl"
    inbox = UpdateInbox(path, allowed)
    disk = FullDisk(monkeypatch, tmp_path)
    for n in (1, 2):
        assert inbox.received([update(n)]) == [n]
        assert inbox.started(n) == 1
        inbox.done(n)  # no OSError into the update processor
    assert inbox.received([update(2)]) == [], "a repeat is still recognised"
    refused = [r for r in caplog.records if "could not write the inbox" in r.getMessage()]
    assert len(refused) == 1 and disk.refused == 6
    disk.full = False
    inbox.received([update(3)])
    assert [u["update_id"] for u in UpdateInbox(path, allowed).pending()] == [3]
