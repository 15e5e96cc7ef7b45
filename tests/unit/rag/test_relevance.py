"""What of LightRAG's answer earns a place in `# Relevant Memory` (`bot/rag/relevance.py`)."""

from bot.rag.context import Chunk, QueryData, render_context
from bot.rag.relevance import ChunkRule, compact, earned, fresh_exchanges, user_words

RENTING = (
    "Date: 2025-03-09 21:47 User: we found a place, two bedrooms in Bedminster Assistant: Lovely!"
)
RAMEN = "Date: 2025-01-19 19:35 User: had the best ramen at lunch Assistant: Was it a new place?"
CLAY = "Date: 2025-05-18 18:42 User: I quit the clay class, it costs a fortune Assistant: Fair."
LONG_REPLY = "Date: 2025-02-20 11:36 User: I got the UX job at Fernhill Assistant: " + "yay " * 100


def block(exchanges: list[str], facts: list[str] = ()) -> str:
    lines = ["Past conversations:", *(f"- {e}" for e in exchanges)]
    if facts:
        lines += ["Related facts:", *(f"- {f}" for f in facts)]
    return "\n".join(lines)


def test_user_words_are_read_from_an_exchange_and_a_document_piece_is_all_words():
    assert user_words(RAMEN) == "had the best ramen at lunch"
    assert user_words("Date: 2025-01-01 10:00 User (Anna): our wifi is slow") == "our wifi is slow"
    assert (
        user_words("report.pdf, part 2: the budget is 40k")
        == "report.pdf, part 2: the budget is 40k"
    )


def test_a_long_reply_is_cut_and_the_users_words_stay_whole():
    cut = compact(LONG_REPLY, 20)
    assert cut.startswith("Date: 2025-02-20 11:36 User: I got the UX job at Fernhill Assistant: ")
    assert cut.endswith("…") and len(cut) < len(LONG_REPLY)
    assert compact(RAMEN, 120) == RAMEN
    assert compact(RAMEN, 0) == "Date: 2025-01-19 19:35 User: had the best ramen at lunch"


def test_small_talk_and_repeats_are_not_rendered():
    repeat = RAMEN.replace("2025-01-19", "2025-08-24")
    small_talk = "Date: 2025-06-22 07:38 User: lol that's hilarious Assistant: Totally."
    assert fresh_exchanges([RAMEN, small_talk, repeat, CLAY], 120) == [RAMEN, CLAY]


def test_render_context_compacts_the_exchanges_it_shows():
    data = QueryData(chunks=[Chunk(content=LONG_REPLY.replace(" User:", "\nUser:"))])
    rendered = render_context(data, 4000, reply_chars=10)
    reply = rendered.splitlines()[1].split(" Assistant: ", 1)[1]
    assert reply.startswith("yay yay") and reply.endswith("…") and len(reply) == 10


def test_what_memory_already_holds_is_dropped():
    memory = "- [2025-03-09] we found a place, two bedrooms in Bedminster"
    question = "Which part of the city did we rent in?"
    kept = earned(block([RENTING, RAMEN]), question, memory, ChunkRule(first=2))
    assert kept == block([RAMEN])


def test_by_default_an_exchange_must_share_a_word_with_the_question():
    question = "How much did the clay class cost?"
    assert earned(block([RAMEN, RENTING, CLAY]), question, "") == block([CLAY])


def test_the_servers_first_exchanges_stay_and_later_ones_need_a_shared_word():
    rule = ChunkRule(first=1, min_shared=1)
    question = "How much did the clay class cost?"
    assert earned(block([RENTING, RAMEN, CLAY]), question, "", rule) == block([RENTING, CLAY])
    assert earned(block([RENTING, RAMEN]), question, "", rule) == block([RENTING])


def test_facts_need_a_shared_word_are_capped_and_never_repeat_a_kept_exchange():
    rule = ChunkRule(first=1, min_shared=1, facts=1)
    facts = [
        "Clay — Class: I quit the clay class, it costs a fortune",  # the exchange's own words
        "Pottery — Class: the pottery class moved to Thursdays",
        "Class — Fees: the class fees went up in May",
        "Ramen — Lunch: had the best ramen at lunch",
    ]
    kept = earned(block([CLAY], facts), "When is the pottery class?", "", rule)
    assert kept == block([CLAY], ["Pottery — Class: the pottery class moved to Thursdays"])


def test_a_section_left_empty_loses_its_heading():
    memory = "- [2025-01-19] had the best ramen at lunch"
    assert earned(block([RAMEN]), "ramen?", memory) == ""
    facts_only = "Related facts:\n- Ramen — Lunch: had the best ramen at lunch"
    assert earned(facts_only, "Where did I eat ramen?", "") == facts_only


def test_an_answer_style_reply_is_left_as_it_is():
    answer = "You rented in Bedminster.\n- two bedrooms"
    assert earned(answer, "Where did we rent?", "- [2025-03-09] two bedrooms") == answer


def test_a_merged_fact_loses_the_parts_memory_holds():
    """LightRAG merges what several documents said of a name; the document's sentence that
    `# Memory` shows already must not come a second time in the prompt."""
    memory = "- [document part 1 of 1 #ab12] Vexmoor handbook. The Vexmoor alarm code is 7319."
    merged = (
        "Vexmoor — Warehouse: the Vexmoor forklift key hangs behind the Quorlith cabinet"
        "<SEP>The Vexmoor alarm code is 7319."
    )
    question = "What is the alarm code at Vexmoor?"
    kept = earned(block([RAMEN], [merged]), question, memory)
    assert "7319" not in kept
    assert "- Vexmoor — Warehouse: the Vexmoor forklift key hangs behind the Quorlith" in kept
    whole = "Vexmoor — Alarm: The Vexmoor alarm code is 7319.<SEP>the Vexmoor alarm code is 7319"
    assert "Vexmoor — Alarm" not in earned(block([RAMEN], [whole]), question, memory)
    whole_block = block([RAMEN], [merged])
    assert earned(whole_block, question, "", ChunkRule(first=1)) == whole_block
    dated = "Vexmoor — Alarm: Date: 2026-12-05 05:07<SEP>The Vexmoor alarm code is 7319."
    assert "Vexmoor — Alarm" not in earned(block([RAMEN], [dated]), question, memory), (
        "a date is all that is left: it does not bear on the question"
    )
