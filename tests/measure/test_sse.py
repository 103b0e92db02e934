"""The one SSE reader: whole events out of chunks cut anywhere, comments skipped, stamped on arrival."""

from __future__ import annotations

from rig.measure.sse import SseParser, read_events

STREAM = (b"retry: 1000\n\n: keep-alive\n\nid: 1\nevent: token\ndata: {\"text\": \"\xe7\xad\x94\"}\n\n"
          b"id: 2\r\nevent: done\r\ndata: {}\r\ndata: x\r\n\r\n")
EXPECTED = [("1", "token", '{"text": "答"}'), ("2", "done", "{}\nx")]


def test_events_come_out_whole_however_the_bytes_are_cut() -> None:
    for size in (1, 2, 3, 7, 64, len(STREAM)):
        parser = SseParser()
        events = [e for i in range(0, len(STREAM), size) for e in parser.feed(STREAM[i:i + size], recv_ns=i)]
        assert [(e.id, e.event, e.data) for e in events] == EXPECTED, size
        assert parser.last_id == "2"


def test_an_event_is_stamped_when_the_chunk_that_completed_it_arrived() -> None:
    parser = SseParser()
    assert parser.feed(b"event: status\ndata: {}\n", recv_ns=100) == []  # not complete before its blank line
    (event,) = parser.feed(b"\n", recv_ns=250)
    assert (event.event, event.recv_ns) == ("status", 250)


def test_read_events_stamps_on_the_rig_clock() -> None:
    stamps = [e.recv_ns for e in read_events(iter([b"data: a\n\n", b"data: b\n\n"]))]
    assert len(stamps) == 2 and 0 < stamps[0] <= stamps[1]


SPELLINGS = [  # blocks in the usual spelling and in every other one the format allows, each one event or none
    b"id: 7\nevent: token\ndata: {}\n\n", b"event: token\ndata: {}\n\n", b"data: plain\n\n",
    b"event: token\nid: 8\ndata: {}\n\n", b"id: 1\nevent: x\nid: 2\ndata: y\n\n", b"id: \nevent: e\ndata: \n\n",
    b"data:no-space\n\n", b"event:token\ndata:{}\n\n", b"data: a\ndata: b\n\n", b": comment\n\n",
    b"retry: 10\n\n", b"data: x\nunknown: y\n\n", b"id: 3\n\n", b"event: only\n\n", b"\n\n",
    b"data: \xe7\xad\x94: colon inside\n\n",
]


def test_whole_blocks_read_at_once_give_the_events_a_line_at_a_time_gives() -> None:
    """A block-reading transport hands whole blocks, read in one pass when spelled the usual way: every mix of
    spellings gives what the same bytes give fed one byte at a time (the line-by-line reader), last id included."""
    import itertools

    for a, b in itertools.product(SPELLINGS, repeat=2):
        chunk = a + b
        whole, by_byte = SseParser(), SseParser()
        got = [(e.id, e.event, e.data) for e in whole.feed(chunk, recv_ns=1)]
        want = [(e.id, e.event, e.data) for i in range(len(chunk)) for e in by_byte.feed(chunk[i:i + 1], recv_ns=1)]
        assert got == want, chunk
        assert whole.last_id == by_byte.last_id, chunk


def test_an_event_begun_in_one_read_is_finished_before_the_whole_blocks_of_the_next() -> None:
    parser = SseParser()
    assert parser.feed(b"id: 1\nevent: token\nda", recv_ns=1) == []
    got = parser.feed(b"ta: {}\n\nid: 2\nevent: done\ndata: {}\n\n", recv_ns=2)
    assert [(e.id, e.event, e.recv_ns) for e in got] == [("1", "token", 2), ("2", "done", 2)]


def test_read_events_gives_what_the_parser_gives_whatever_the_chunks() -> None:
    """Whole blocks take the parser's one-pass reading (a one-line `data:` event without the block regex): over every
    pair of spellings, as whole chunks and cut after each byte (a whole block arriving while an event is unfinished),
    `read_events` gives the same events as the parser fed a byte at a time."""
    import itertools

    odd = [b"data: x\r\n\n", b"data: a\rb\n\n", b"data: \n\n", b"data: \xe7\xad\n\n", b"data: \xff\r\n\n", b"data: a\nb\n\n"]
    for a, b in itertools.product(SPELLINGS + odd, repeat=2):
        stream = a + b
        by_byte = SseParser()
        want = [(e.id, e.event, e.data) for i in range(len(stream)) for e in by_byte.feed(stream[i:i + 1], 1)]
        for cut in range(len(stream) + 1):
            pieces = [p for p in (stream[:cut], stream[cut:]) if p]
            for chunks in (pieces, [a, b]):
                got = [(e.id, e.event, e.data) for e in read_events(iter(chunks))]
                assert got == want, (chunks, got, want)
