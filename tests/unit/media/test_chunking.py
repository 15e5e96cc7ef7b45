import itertools

import pytest

from bot.media.chunking import chunk_text


def test_short_text_is_one_piece():
    assert chunk_text("  A short note.  ") == ["A short note."]
    assert chunk_text("   ") == []


def test_pieces_stay_under_the_limit_and_cover_every_word():
    text = "\n\n".join(f"Paragraph {n}. " + "word " * 60 for n in range(40))
    pieces = chunk_text(text, max_chars=500, overlap_chars=50)
    assert all(len(piece) <= 500 for piece in pieces)
    for n in range(40):
        assert any(f"Paragraph {n}." in piece for piece in pieces)


def test_cuts_fall_at_paragraph_ends_when_there_are_some():
    paragraphs = [f"Section {n}: " + "x" * 150 + "." for n in range(6)]
    pieces = chunk_text("\n\n".join(paragraphs), max_chars=400, overlap_chars=0)
    assert all(piece.endswith(".") for piece in pieces)
    assert pieces[0].startswith("Section 0")


def test_a_sentence_cut_at_a_boundary_is_whole_in_the_overlap():
    text = " ".join(f"Fact {n} is here." for n in range(200))
    pieces = chunk_text(text, max_chars=300, overlap_chars=60)
    for first, second in itertools.pairwise(pieces):
        assert first[-20:].split()[-1] in second


def test_text_without_spaces_is_cut_anywhere_and_ends():
    pieces = chunk_text("x" * 2500, max_chars=1000, overlap_chars=100)
    assert all(len(piece) <= 1000 for piece in pieces)
    assert len(pieces) == 3


def test_an_overlap_of_half_a_piece_or_more_is_refused():
    with pytest.raises(ValueError):
        chunk_text("text", max_chars=100, overlap_chars=50)
