import io

import pytest
from pypdf import PdfReader, PdfWriter

from bot.media.extraction import extract_text
from bot.media.kinds import file_kind
from bot.media.model import FileKind, UnreadableFile
from tests.fakes.files import docx_with_paragraphs, pdf_with_text


def test_a_pdf_gives_its_text_and_page_count():
    data = pdf_with_text("The boiler code is 4471.", "Service every March.")
    found = extract_text(data, FileKind.PDF, max_pages=50, max_chars=10_000)
    assert "The boiler code is 4471." in found.text
    assert "Service every March." in found.text
    assert (found.pages, found.pages_read, found.truncated) == (2, 2, False)


def test_a_pdf_without_a_text_layer_gives_no_text():
    found = extract_text(pdf_with_text("", ""), FileKind.PDF, max_pages=50, max_chars=10_000)
    assert found.text == ""
    assert found.pages == 2


def test_reading_stops_at_the_page_and_character_limits():
    data = pdf_with_text(*(f"Page number {n} says hello." for n in range(1, 6)))
    by_pages = extract_text(data, FileKind.PDF, max_pages=2, max_chars=10_000)
    assert (by_pages.pages, by_pages.pages_read) == (5, 2)
    assert "Page number 2" in by_pages.text and "Page number 3" not in by_pages.text

    by_chars = extract_text(data, FileKind.PDF, max_pages=50, max_chars=40)
    assert len(by_chars.text) == 40 and by_chars.truncated
    assert by_chars.pages_read is not None and by_chars.pages_read < 5


def test_a_damaged_pdf_is_refused_with_a_clear_message():
    whole = pdf_with_text("Some words on a page.")
    with pytest.raises(UnreadableFile, match="PDF seems damaged"):
        extract_text(whole[: len(whole) // 3], FileKind.PDF, max_pages=50, max_chars=10_000)
    with pytest.raises(UnreadableFile, match="PDF seems damaged"):
        extract_text(b"%PDF-1.7 not really", FileKind.PDF, max_pages=50, max_chars=10_000)


def test_a_password_protected_pdf_is_refused_as_such():
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_text("Secret plans."))))
    writer.encrypt("hunter2")
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(UnreadableFile, match="password"):
        extract_text(out.getvalue(), FileKind.PDF, max_pages=50, max_chars=10_000)


def test_a_docx_gives_its_paragraphs():
    data = docx_with_paragraphs("Packing list", "Tent, stove, two sleeping bags.")
    found = extract_text(data, FileKind.DOCX, max_pages=50, max_chars=10_000)
    assert found.text == "Packing list\nTent, stove, two sleeping bags."
    assert found.pages is None


def test_a_file_named_docx_that_is_not_one_is_refused():
    with pytest.raises(UnreadableFile, match="Word document"):
        extract_text(b"just some text", FileKind.DOCX, max_pages=50, max_chars=10_000)


@pytest.mark.parametrize(
    "data",
    [
        "Größe: 42 — fine".encode(),
        "\ufeffGröße: 42 — fine".encode(),
        "Größe: 42 — fine".encode("utf-16"),
        "Größe: 42 — fine".encode("cp1252"),
    ],
)
def test_plain_text_is_decoded_whatever_its_encoding(data):
    found = extract_text(data, FileKind.TEXT, max_pages=50, max_chars=10_000)
    assert found.text == "Größe: 42 — fine"


def test_binary_data_named_txt_is_refused():
    with pytest.raises(UnreadableFile, match="binary"):
        extract_text(b"\x89PNG\r\n\x1a\n\x00\x00\x00", FileKind.TEXT, max_pages=5, max_chars=100)


def test_file_kinds_come_from_the_mime_type_then_the_name():
    assert file_kind("notes.bin", "application/pdf") is FileKind.PDF
    assert file_kind("Notes.MD", None) is FileKind.MARKDOWN
    assert file_kind("report.docx", "application/octet-stream") is FileKind.DOCX
    assert file_kind("photo", "image/jpeg; charset=binary") is FileKind.IMAGE
    assert file_kind("archive.zip", "application/zip") is None
    assert file_kind(None, None) is None
