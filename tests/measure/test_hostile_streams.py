"""Hostile streams end within bounds: an answer that never ends is stopped by the answer budget and kept as
evidence; one giant event, or bytes with no line end, stop at the reader's cap as the target's protocol error,
with a sample and not the whole. Each shape is served over a real socket by an in-process target; the rig's own
memory while reading it is measured (tracemalloc peak) against the cap."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rig.adapters import Capabilities, WorkbenchAdapter
from rig.adapters.http.frames import json_frames, ndjson_frames
from rig.adapters.models import Auth
from rig.clock import now_ns
from rig.config import AnswerBudget
from rig.errors import AnswerNeverEnded, TargetProtocolError
from rig.evidence import EvidenceStore
from rig.measure.sse import LineSplitter, SseParser, StreamTooLarge
from rig.measure.transcript import RunTranscript
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.target.setup import TargetSetup
from rig.telemetry.otlp_receiver import OtlpReceiver
from rig.telemetry.tracing import noop_tracer

CAP = 1 << 20  # the reader's cap in these tests: 1 MiB
PIECE = b"x" * 65536


class _Hostile(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, shape: str) -> None:
        self.shape = shape
        self.sent = 0
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Hostile

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        shape, limit = self.server.shape, 200 * CAP  # the target's own bound, far past the rig's cap
        try:
            if shape == "endless":
                for i in range(10**7):
                    self.wfile.write(f'event: token\ndata: {{"text": "w{i} ", "kind": "answer"}}\n\n'.encode())
            elif shape in ("giant_event", "no_line_end"):
                self.wfile.write(b"event: token\ndata: " if shape == "giant_event" else b"")
                while self.server.sent < limit:
                    self.wfile.write(PIECE)
                    self.server.sent += len(PIECE)
        except OSError:  # the rig closed the stream: what a bounded reader does
            return

    def log_message(self, *_: object) -> None:
        return


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[_Hostile]:
    server = _Hostile(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _ctx(tmp_path: Path, url: str, budget: AnswerBudget) -> RecordingContext:
    setup = TargetSetup(embedded=False, target_url=url, usernames={"a": "a", "b": "b"}, project_a="p",
                        project_isolated="i", project_b_shared="s", project_b_private="q", docs={}, isolated={},
                        b_shared_doc="d", b_private_doc="e", ingest=[])
    auth = Auth(token="t", user_id="u", username="a")
    adapter = WorkbenchAdapter(url)
    adapter.max_event_bytes = CAP
    target = TargetSession(adapter=adapter, adapter_spec="test", usernames={}, passwords={}, answer_budget=budget,
                           auth={"a": auth, "b": auth}, setup=setup, caps=Capabilities(), receiver=OtlpReceiver())
    span = noop_tracer().case_span(1, "可靠性-01-1", [], 1).__enter__()
    return RecordingContext(1, 1, EvidenceStore(tmp_path / "e.sqlite3"), target, tracer=noop_tracer(), span=span)


@pytest.mark.parametrize("hostile", ["endless"], indirect=True)
def test_an_answer_that_never_ends_stops_at_the_budget_with_its_evidence(hostile: _Hostile, tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, f"http://127.0.0.1:{hostile.server_address[1]}", AnswerBudget(events=2000, seconds=300))
    run = RunTranscript(run_id="r1", question="q", submit_ns=now_ns())
    with pytest.raises(AnswerNeverEnded, match=r"run r1: the answer never ended \(2001 events"):
        ctx.read(ctx.a, run)
    [kept] = [e for e in ctx.store.evidence(kind="run")]
    assert kept.data["events_read"] == 2001 and kept.data["answer_head"].startswith("w0 w1 ")
    assert len(run.events) == 2000 and run.end_ns is not None
    ctx.close()


@pytest.mark.parametrize("hostile", ["giant_event", "no_line_end"], indirect=True)
def test_a_giant_event_or_a_line_without_end_stops_at_the_cap(hostile: _Hostile, tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, f"http://127.0.0.1:{hostile.server_address[1]}", AnswerBudget())
    tracemalloc.start()
    try:
        with pytest.raises(StreamTooLarge) as caught:
            ctx.read(ctx.a, RunTranscript(run_id="r1", question="q", submit_ns=now_ns()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        ctx.close()
    assert isinstance(caught.value, TargetProtocolError)  # the target's protocol error: a FAIL, not a crash
    assert caught.value.exchange is not None and caught.value.exchange["cap_bytes"] == CAP
    assert len(caught.value.exchange["sample"]) <= 512
    assert hostile.sent < 200 * CAP, "the rig read to the target's end instead of stopping at its cap"
    assert peak < 8 * CAP, f"reading a capped stream held {peak / CAP:.1f} MiB"


def test_a_line_without_its_end_is_held_in_pieces_and_joined_once() -> None:
    """Holding an unfinished line costs the same for every chunk: the pieces are kept as they came, never re-joined,
    and joined once when the line ends (a reader that re-joined its buffer per chunk was quadratic;
    bench/stream_reader.py measures both)."""
    splitter = LineSplitter(max_bytes=1 << 24)
    pieces = [bytes([65 + i % 26]) * 4096 for i in range(256)]
    for piece in pieces:
        assert splitter.feed(piece) == []
    assert len(splitter._pending) == len(pieces) and all(a is b for a, b in zip(splitter._pending, pieces, strict=True))
    assert splitter.feed(b"\nnext") == [b"".join(pieces)] and splitter.rest() == b"next"
    parser = SseParser(max_event_bytes=16 << 20, max_line_bytes=16 << 20)
    data = b"data: " + b"y" * (1 << 20)
    for i in range(0, len(data), 4096):
        assert parser.feed(data[i:i + 4096]) == []
    assert parser.feed(b"\n\n")[0].data == "y" * (1 << 20)


def test_ndjson_and_json_framers_stop_at_the_cap() -> None:
    with pytest.raises(StreamTooLarge):
        list(ndjson_frames(iter([b'{"a": "' + b"z" * 4096] * 64), max_event_bytes=65536))
    with pytest.raises(StreamTooLarge):
        list(json_frames(iter([b'[{"a": "' + b"z" * 4096] + [b"z" * 4096] * 64), max_event_bytes=65536))
    values = [f.data for f in json_frames(iter([b'[{"t": "a\\"}', b'"}, {"t": "\xc3', b'\xa9"}]']))]
    assert values == [{"t": 'a"}'}, {"t": "é"}]  # an escape and a character split between chunks
