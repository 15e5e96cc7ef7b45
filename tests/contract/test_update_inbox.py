"""What every Telegram inbox promises (`bot/ports/inbox.py`): the file in the data dir and
the PostgreSQL table alike. Each update is journaled once, handed out, marked done; what was
not done is handed out again after a stop, in order, with what its turn had recorded."""

from __future__ import annotations

import pytest

from tests.contract.conftest import allowed_sender
from tests.fakes.waiting import wait_until


def update(update_id: int, user: int = 1, text: str = "hi") -> dict:
    sender = {"id": user, "is_bot": False, "first_name": "U"}
    return {"update_id": update_id, "message": {"message_id": update_id, "from": sender,
            "chat": {"id": user, "type": "private"}, "date": 1, "text": text}}  # fmt: skip


class Handed:
    """A channel's `deliver`: what the inbox handed this process, in order."""

    def __init__(self) -> None:
        self.updates: list[dict] = []

    async def __call__(self, data: dict) -> None:
        self.updates.append(data)

    @property
    def ids(self) -> list[int]:
        return [u["update_id"] for u in self.updates]

    async def wait_for(self, ids: list[int], within: float = 5.0) -> None:
        """Until exactly `ids` were handed out (chats may interleave), each chat's in order."""
        await wait_until(lambda: sorted(self.ids) == sorted(ids), within, f"handed {ids}")
        for chat in {u["message"]["chat"]["id"] for u in self.updates}:
            of_chat = [u["update_id"] for u in self.updates if u["message"]["chat"]["id"] == chat]
            assert of_chat == sorted(of_chat), f"chat {chat} out of order: {of_chat}"


async def test_a_new_update_is_handed_out_once_however_often_telegram_sends_it(new_inbox):
    inbox, handed = await new_inbox(), Handed()
    await inbox.open(handed)
    await inbox.take([update(10)])
    await inbox.take([update(10)])  # Telegram did not hear the confirmation
    await inbox.take([update(10), update(11, user=2)])
    await handed.wait_for([10, 11])
    await inbox.finished(10)
    await inbox.take([update(10)])  # again, after it was handled
    await inbox.take([update(12)])
    await handed.wait_for([10, 11, 12])
    assert inbox.last_update_id == 12


async def test_what_was_not_finished_is_handed_out_again_after_a_stop_in_order(new_inbox):
    first, handed = await new_inbox(), Handed()
    await first.open(handed)
    await first.take([update(20), update(21, user=2), update(22), update(23)])
    await handed.wait_for([20, 21, 22, 23])
    await first.finished(21)
    await first.close()

    again, replayed = await new_inbox(), Handed()
    await again.open(replayed)
    await replayed.wait_for([20, 22, 23])
    assert again.last_update_id == 23, "long polling resumes after the last one"
    await again.take([update(22)])
    assert sorted(replayed.ids) == [20, 22, 23], "a repeat of a waiting one is not handed out twice"


async def test_a_strangers_words_are_never_kept_but_the_update_is_handed_out(new_inbox):
    inbox, handed = await new_inbox(), Handed()
    await inbox.open(handed)
    stranger = update(30, user=999, text="a stranger's secret")
    assert not allowed_sender(stranger)
    await inbox.take([stranger])
    await handed.wait_for([30])  # answered ("you are not allowed"), by this process
    await inbox.take([stranger])
    await inbox.close()
    again, replayed = await new_inbox(), Handed()
    await again.open(replayed)
    await again.take([update(31)])
    await replayed.wait_for([31])  # the stranger's: neither replayed nor handed out again
    assert again.last_update_id == 31


async def test_starts_of_a_turn_are_counted_across_stops(new_inbox):
    first, handed = await new_inbox(), Handed()
    await first.open(handed)
    await first.take([update(40)])
    await handed.wait_for([40])
    assert await first.count_start(40) == 1
    assert await first.count_start(999) == 0, "not one it holds"
    await first.close()  # cut short mid-turn

    again, replayed = await new_inbox(), Handed()
    await again.open(replayed)
    await replayed.wait_for([40])
    assert await again.count_start(40) == 2
    await again.finished(40)
    assert await again.count_start(40) == 0


async def test_a_preview_and_a_delivered_answer_survive_a_stop_until_finished(new_inbox):
    first, handed = await new_inbox(), Handed()
    await first.open(handed)
    await first.take([update(50), update(51, user=2)])
    await handed.wait_for([50, 51])
    first.preview_shown(50, [7, 8])
    first.answered(51, "the reply they already have")
    assert first.leftover_preview(50) == [7, 8]
    assert first.answer_of(51) == "the reply they already have"
    await first.close()

    again, replayed = await new_inbox(), Handed()
    await again.open(replayed)
    await replayed.wait_for([50, 51])
    assert again.leftover_preview(50) == [7, 8]
    assert again.answer_of(51) == "the reply they already have"
    again.preview_shown(50, [])
    await again.finished(51)
    assert again.leftover_preview(50) == [] and again.answer_of(51) is None


async def test_forget_all_leaves_none_of_a_users_handled_words_and_keeps_waiting_ones(new_inbox):
    inbox, handed = await new_inbox(), Handed()
    await inbox.open(handed)
    await inbox.take([update(60, text="mine"), update(61, text="waiting"), update(62, user=2)])
    await handed.wait_for([60, 61, 62])
    await inbox.finished(60)
    await inbox.forget_user("1")
    assert await inbox.count_for("1") == 0
    await inbox.close()
    again, replayed = await new_inbox(), Handed()
    await again.open(replayed)
    await replayed.wait_for([61, 62])  # a turn still waiting keeps its message


# -- several processes on one token: PostgreSQL only --------------------------------------

pg_only = pytest.mark.parametrize(
    "new_inbox", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@pg_only
async def test_a_chat_is_handled_by_one_process_whichever_receives_its_updates(new_inbox):
    a, b = await new_inbox(), await new_inbox()
    at_a, at_b = Handed(), Handed()
    await a.open(at_a)
    await b.open(at_b)
    await a.take([update(70)])  # chat 1: A holds it while 70 is being handled
    await at_a.wait_for([70])
    await b.take([update(71)])  # B receives the next of chat 1...
    await b.take([update(72, user=2)])  # ...and one of chat 2, nobody's
    await at_a.wait_for([70, 71])  # ...which A hands out, after 70
    await at_b.wait_for([72])
    await a.finished(70)
    await a.finished(71)
    await b.take([update(73)])  # chat 1 is let go once nothing waits: either may take it
    await wait_until(lambda: 73 in at_a.ids + at_b.ids, 5.0, "73 handed out")
    await b.take([update(74, user=2)])  # a later update proves no second hand-out is coming
    await wait_until(lambda: 74 in at_a.ids + at_b.ids, 5.0, "74 handed out")
    assert sorted(at_a.ids + at_b.ids) == [70, 71, 72, 73, 74], "nothing handed out twice"


@pg_only
async def test_a_dead_processs_chats_are_taken_over_with_their_turns_state(new_inbox):
    a, b = await new_inbox(), await new_inbox()
    at_a, at_b = Handed(), Handed()
    await a.open(at_a)
    await b.open(at_b)
    await a.take([update(80), update(81), update(82, user=3)])
    await at_a.wait_for([80, 81, 82])
    assert await a.count_start(80) == 1
    a.answered(80, "already delivered")
    await a.finished(82)
    await b.take([update(83)])  # chat 1 is still A's
    await at_a.wait_for([80, 81, 82, 83])
    assert at_b.ids == []

    await a.close()  # its connection ends, as a killed process's does
    await at_b.wait_for([80, 81, 83])  # within a sweep, in order
    assert b.answer_of(80) == "already delivered"
    assert await b.count_start(80) == 2
