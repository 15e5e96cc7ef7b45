"""The long-conversation benchmark scores contexts by fixed rules: BM25 ranks by rare shared
words, a message is held by a line that keeps most of its content words (however the bot
reworded it), answers count in any of their forms, and packing stays within the budget."""

from bench.longconv_data import Question
from bench.longconv_scoring import Bm25, contains_answers, content_words, holds, pack
from bench.memory_longconv import Context, Scores

ENGAGED = "my sister Leila just got engaged!! Karim proposed on a beach in Crete"


def test_bm25_puts_the_document_sharing_the_rarest_words_first():
    docs = [
        "the weather is nice today",
        "we adopted a grey cat called Miso yesterday",
        "nice weather, nice day, nice walk",
        "the vet says the cat has a cold",
    ]
    ranking = Bm25(docs).rank("how is Miso the cat doing")
    assert ranking[:2] == [1, 3]


def test_bm25_ties_keep_the_documents_order_and_unmatched_come_last():
    docs = ["nothing here", "pottery class tonight", "nothing there", "pottery class again"]
    assert Bm25(docs).rank("pottery class") == [1, 3, 0, 2]


def test_bm25_of_a_query_sharing_no_word_scores_zero_everywhere():
    assert Bm25(["a red bicycle", "a blue car"]).scores("which hobby did I start") == [0.0, 0.0]


def test_content_words_drop_stop_words_and_cut_to_a_stem():
    assert content_words("I was engaged in 2019, the engagement is off!") == [
        "engag",
        "2019",
        "engag",
    ]


def test_a_reworded_fact_still_holds_the_message_it_came_from():
    line = "- [fact #a1] The user's sister Leila got engaged; Karim proposed on a beach in Crete."
    assert holds([line], ENGAGED)


def test_an_episode_line_holds_the_user_message_it_stored():
    line = f"- [earlier 2025-01-06 #b2] User: {ENGAGED} → Assistant: Congratulations to her!"
    assert holds(["- [fact 2025-02-01 #c3] The user likes tea.", line], ENGAGED)


def test_words_scattered_over_several_lines_do_not_hold_a_message():
    lines = [
        "- [fact #1] The user's sister Leila lives in Porto.",
        "- [fact #2] Karim is a colleague.",
        "- [fact #3] A beach holiday in Crete is planned.",
    ]
    assert not holds(lines, ENGAGED)


def test_a_line_with_too_few_of_the_words_does_not_hold_it():
    assert not holds(["- Leila got engaged."], ENGAGED)
    assert not holds(["- anything"], "lol ok")  # no content words: never held


def test_answers_count_in_any_form_and_case_but_all_are_needed():
    context = "- [2025-04-12] we adopted a cat yesterday, Miso\n- Bedminster flat"
    assert contains_answers(context, ["2025-04-11|april 11|miso"])
    assert contains_answers(context, ["MISO", "bedminster"])
    assert not contains_answers(context, ["Miso", "Shah"])


def test_packing_takes_lines_best_first_within_the_budget():
    ranked = ["a" * 10, "b" * 10, "c" * 3]
    assert pack(ranked, 21) == ["a" * 10, "b" * 10]  # 10 + newline + 10
    assert pack(ranked, 20) == ["a" * 10, "c" * 3], "a line that does not fit is skipped"
    assert pack(ranked, 0) == []
    assert len("\n".join(pack(ranked * 5, 57))) <= 57


def test_a_question_over_several_messages_needs_all_of_them_held():
    said = {"m1": "we got a beagle puppy called Pepper", "m2": "Pepper ate a sock at the vet"}
    question = Question("q1", "multi", "How is the dog?", ("m1", "m2"), ("Pepper",))
    scores = Scores()
    scores.add(question, Context(("- [fact] The user got a beagle puppy called Pepper.",)), said)
    scores.add(question, Context(tuple(f"- {text}" for text in said.values())), said)
    assert scores.recalled == [False, True]
    assert scores.contained == [True, True]
    assert scores.of("single").asked == [] and scores.of("multi").recall == 0.5
