from rig.adapters.sse import SseParser


def test_parser_yields_events_at_blank_lines_and_skips_comments() -> None:
    parser = SseParser()
    lines = ["retry: 1000", "", ": keep-alive", "", "id: 1", "event: token", 'data: {"text": "a"}', "",
             "id: 2", "event: done", "data: {}", "data: x", ""]
    events = [e for e in (parser.feed(line) for line in lines) if e is not None]
    assert [(e.id, e.event, e.data) for e in events] == [("1", "token", '{"text": "a"}'), ("2", "done", "{}\nx")]
    assert parser.last_id == "2"
