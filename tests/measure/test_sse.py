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
