"""The generalisation bench's rank figures: where each answer stands in `# Memory`."""

from bench.memory_generalisation import Outcome, answer_place, rank_figures

LINES = [
    "- [fact 2026-03-02 #aaaaaaaaaa] The user's dog is called Biscuit.",
    "- [earlier 2026-03-02 #bbbbbbbbbb] User: moved to Utrecht last spring → Assistant: Noted.",
    "- [earlier 2026-03-02 #cccccccccc] User: honestly can't stand cilantro → Assistant: Noted.",
]


def outcome(*places: int | None) -> Outcome:
    recalled = sum(1 for place in places if place is not None and place <= 6)
    return Outcome(recalled, len(places), [], 0, 10, places=places)


def test_the_answer_is_placed_at_its_first_line_counting_from_one():
    assert answer_place(LINES, "Biscuit") == 1
    assert answer_place(LINES, "cilantro") == 3
    assert answer_place([*LINES, LINES[1]], "Utrecht") == 2


def test_an_answer_missing_from_memory_has_no_place():
    assert answer_place(LINES, "Alexanderplatz") is None
    assert answer_place([], "Biscuit") is None


def test_shares_and_mean_reciprocal_rank_count_a_missing_answer_as_zero():
    found = outcome(1, 2, 4, None)
    assert found.share_within(1) == 0.25
    assert found.share_within(3) == 0.5
    assert found.share_within(6) == 0.75
    assert found.mean_reciprocal_rank == (1 + 1 / 2 + 1 / 4 + 0) / 4


def test_no_question_asked_gives_zero_rather_than_a_division_error():
    empty = outcome()
    assert empty.share_within(1) == 0.0
    assert empty.mean_reciprocal_rank == 0.0


def test_rank_figures_name_the_kind_split_and_arm():
    figures = rank_figures(outcome(1, 3), "paraphrase", "dev", "words + meaning")
    assert [(f.name, f.value) for f in figures] == [
        ("paraphrase first place, dev, words + meaning", 0.5),
        ("paraphrase within 3, dev, words + meaning", 1.0),
        ("paraphrase mean reciprocal rank, dev, words + meaning", (1 + 1 / 3) / 2),
    ]


def test_junk_share_is_still_the_share_of_stored_items_from_small_talk():
    assert Outcome(1, 2, [], junk=1, stored=10, places=(1, None)).junk_share == 0.1
