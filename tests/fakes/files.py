"""Real small files for tests, made by the libraries that read them: PDFs, DOCX, images."""

from __future__ import annotations

import io

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def pdf_with_text(*pages: str) -> bytes:
    """A PDF whose pages each show one text (lines split on newlines), in Helvetica; an empty
    string makes a page with no text at all, as a scan without a text layer reads."""
    return _pdf([_text_operators(text) for text in pages])


def _pdf(contents: list[bytes], compressed: bool = False) -> bytes:
    """A PDF with one page per content stream, font F1 (Helvetica) on each."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    font_ref = writer._add_object(font)
    for content in contents:
        page = writer.add_blank_page(width=612, height=792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
        stream = DecodedStreamObject()
        stream.set_data(content)
        page[NameObject("/Contents")] = writer._add_object(
            stream.flate_encode() if compressed else stream
        )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _text_operators(text: str) -> bytes:
    if not text:
        return b""
    lines = []
    for line in text.split("\n"):
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        lines.append(f"({escaped}) Tj 0 -16 Td")
    return ("BT /F1 12 Tf 72 740 Td " + " ".join(lines) + " ET").encode("latin-1")


def docx_with_paragraphs(*paragraphs: str) -> bytes:
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def png_image(width: int, height: int, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def costly_pdf(moves: int = 400_000) -> bytes:
    """A few kilobytes of PDF whose one page holds `moves` text-position operators: pypdf
    parses each in Python, about a second of CPU per 100,000, for one letter of text."""
    return _pdf([b"BT /F1 12 Tf 72 720 Td\n" + b"0 0 Td\n" * moves + b"(x) Tj ET\n"], True)
