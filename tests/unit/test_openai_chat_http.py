"""How the chat client splits a streamed body into server-sent events' data."""

from bot.adapters.openai_chat_http import _EventData


def events_of(*chunks: bytes) -> list[str]:
    decoder = _EventData()
    found: list[str] = []
    for chunk in chunks:
        found += decoder.feed(chunk)
    return found + decoder.end()


def test_events_split_across_chunks_come_out_whole():
    assert events_of(b'data: {"a"', b": 1}\n", b"\ndata: [DO", b"NE]\n\n") == [
        '{"a": 1}',
        "[DONE]",
    ]


def test_crlf_lines_comments_and_other_fields_are_read_as_the_sdk_reads_them():
    body = b": keep-alive\r\nevent: chunk\r\nid: 7\r\ndata:{}\r\n\r\nretry: 10\r\n\r\n"
    assert events_of(body) == ["{}"]


def test_an_event_of_several_data_lines_is_joined_with_newlines():
    assert events_of(b"data: one\ndata: two\n\n") == ["one\ntwo"]


def test_a_last_event_without_its_blank_line_is_not_lost():
    assert events_of(b"data: a\n\ndata: b") == ["a", "b"]


def test_text_split_inside_a_multibyte_character_is_decoded_whole():
    encoded = 'data: {"t": "привет"}\n\n'.encode()
    cut = encoded.index("и".encode()) + 1
    assert events_of(encoded[:cut], encoded[cut:]) == ['{"t": "привет"}']
