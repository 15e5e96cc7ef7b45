from datetime import UTC, datetime

from bot.rag.context import Chunk, Entity, QueryData, Relationship, render_context
from bot.rag.documents import file_source_for

AT = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = file_source_for(AT, "111", "t:111")
ALICE_2 = file_source_for(AT, "111", "t:111")
BOB = file_source_for(AT, "222", "t:222")


def data():
    return QueryData(
        chunks=[
            Chunk(content="alice chunk", file_path=ALICE),
            Chunk(content="bob chunk", file_path=BOB),
        ],
        entities=[
            Entity(
                entity_name="Redis", description="alice only", file_path=f"{ALICE}<SEP>{ALICE_2}"
            ),
            Entity(entity_name="Shared", description="both", file_path=f"{ALICE}<SEP>{BOB}"),
            Entity(entity_name="Orphan", description="no source", file_path=""),
        ],
        relationships=[
            Relationship(src_id="Redis", tgt_id="6380", description="a", file_path=ALICE),
            Relationship(src_id="Cheese", tgt_id="Bob", description="b", file_path=BOB),
        ],
    )


def test_only_items_wholly_from_the_asking_user_are_kept():
    mine = data().owned_by("111")
    assert [c.content for c in mine.chunks] == ["alice chunk"]
    assert [e.entity_name for e in mine.entities] == ["Redis"]
    assert [r.src_id for r in mine.relationships] == ["Redis"]
    theirs = data().owned_by("222")
    assert [c.content for c in theirs.chunks] == ["bob chunk"]
    assert theirs.entities == []
    assert data().owned_by("333") == QueryData()


def test_what_names_a_document_the_user_no_longer_has_is_left_out():
    """A deleted document's words stay in the descriptions of names it shared with others,
    which still list it among their sources."""
    mine = data().owned_by("111")
    assert mine.sources() == {ALICE, ALICE_2}
    kept = mine.still_held({ALICE})
    assert [c.content for c in kept.chunks] == ["alice chunk"]
    assert [r.src_id for r in kept.relationships] == ["Redis"]
    assert kept.entities == [], "Redis names ALICE_2 too, which is gone"
    assert mine.still_held({ALICE, ALICE_2}) == mine
    assert mine.still_held(set()) == QueryData()


def test_rendering_puts_conversations_first_and_respects_the_budget():
    rendered = render_context(data().owned_by("111"), 4000)
    assert rendered.splitlines() == [
        "Past conversations:",
        "- alice chunk",
        "Related facts:",
        "- Redis — 6380: a",
        "Known entities:",
        "- Redis: alice only",
    ]
    many = QueryData(chunks=[Chunk(content=f"exchange {i} " + "x" * 300) for i in range(50)])
    small = render_context(many, 1000)
    assert len(small) <= 1000
    assert small.startswith("Past conversations:\n- exchange 0")


def test_a_chunk_longer_than_the_budget_is_cut_not_dropped():
    huge = QueryData(chunks=[Chunk(content="word " * 2000)])
    rendered = render_context(huge, 500)
    assert 400 < len(rendered) <= 500 and rendered.endswith("…")


def test_nothing_found_renders_nothing():
    assert render_context(QueryData(), 4000) == ""
