"""How a streamed chat answer's body is split into server-sent events' data."""

from bot.adapters.openai_answers import SseEvents


def events_of(*chunks: bytes) -> list[str]:
    decoder = SseEvents()
    found: list[str] = []
    for chunk in chunks:
        found += decoder.feed(chunk)
    return found + decoder.end()


def test_events_split_across_chunks_come_out_whole():
    assert events_of(b'data: {"a"', b": 1}\n", b"\ndata: [DO", b"NE]\n\n") == [
        '{"a": 1}',
        "[DONE]",
    ]


def test_crlf_lines_ping_comments_and_other_fields_are_read_as_the_sdk_reads_them():
    body = b": ping\r\nevent: chunk\r\nid: 7\r\ndata:{}\r\n\r\nretry: 10\r\n\r\n: ping\n\n"
    assert events_of(body) == ["{}"]


def test_an_event_of_several_data_lines_is_joined_with_newlines():
    assert events_of(b"data: one\ndata: two\n\n") == ["one\ntwo"]


def test_a_last_event_without_its_blank_line_is_not_lost():
    assert events_of(b"data: a\n\ndata: b") == ["a", "b"]


def test_text_split_inside_a_multibyte_character_is_decoded_whole():
    encoded = 'data: {"t": "привет"}\n\n'.encode()
    cut = encoded.index("и".encode()) + 1
    assert events_of(encoded[:cut], encoded[cut:]) == ['{"t": "привет"}']


class Counted(bytes):
    """A chunk that counts the bytes copied when something waiting is joined to it with `+`
    (Python asks a right operand that subclasses `bytes` first)."""

    copied = 0

    def __radd__(self, waiting: bytes) -> bytes:
        Counted.copied += len(waiting) + len(self)
        return bytes(waiting) + bytes(self)


def test_a_line_without_end_is_kept_in_parts_not_copied_again_per_chunk():
    """32 MB without a newline, fed 16 KB at a time (as the SDK's transport reads): joining
    what waits to each new chunk would copy ~32 GB in all; here it waits untouched until its
    line ends."""
    decoder = SseEvents()
    Counted.copied = 0
    decoder.feed(b"data: ")
    for _ in range(2048):
        assert decoder.feed(Counted(b"x" * 16384)) == []
    assert decoder.buffered == 6 + 2048 * 16384
    assert Counted.copied < 4 * 2048 * 16384
    assert decoder.feed(b"\n\n") == ["x" * (2048 * 16384)]
    assert decoder.buffered == 0
