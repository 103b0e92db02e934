"""The stream and result language of target.http: `each`, `end: close`, the rig's functions, `poll`, the citations an
answer's markers make, `stop: disconnect` — each checked when rig.yaml is read, and each doing what it says."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import ValidationError

from rig.adapters.http import HttpAdapter
from rig.adapters.http.extract import Reader
from rig.adapters.http.frames import EventSorter
from rig.adapters.http.functions import options
from rig.adapters.http.spec import HttpSpec, StreamSpec
from rig.adapters.models import Auth, Citation, CitationEvent, TerminalEvent, TokenEvent
from rig.errors import CapabilityMissing
from rig.measure.citations import cite_sources

LINES = [{"references": [{"reference_id": "1", "file_path": "docs/a.pdf"}, {"reference_id": "2", "file_path": "b.pdf"}]},
         {"response": "Badges kept value"}, {"response": " [1]."}, {"response": "\nUnknown claim [3]."}]
STREAM = {"format": "ndjson", "end": "close", "events": [
    {"when": "data.references", "type": "citation", "each": "data.references",
     "data": {"citation_id": "item.reference_id", "marker": "to_number(item.reference_id)",
              "doc_id": "doc_of(item.file_path) || item.file_path"}},
    {"when": "data.response", "type": "token", "data": {"text": "data.response"}}]}


def _ndjson(lines: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(x).encode() + b"\n" for x in lines]


def test_each_makes_one_event_per_element_and_a_clean_close_ends_the_answer() -> None:
    sorter = EventSorter(StreamSpec.model_validate(STREAM))
    ledger = {"a.pdf": "doc-a"}
    events = list(sorter.events(_ndjson(LINES), options(doc_of=ledger.get)))
    cites = [e for e in events if isinstance(e, CitationEvent)]
    assert [(c.citation_id, c.data["doc_id"], c.data["marker"]) for c in cites] == [("1", "doc-a", 1), ("2", "b.pdf", 2)]
    end = events[-1]
    assert isinstance(end, TerminalEvent) and end.state == "completed" and end.data["derived"] == "stream_end"
    silent = list(sorter.events(_ndjson(LINES[:1])))
    assert isinstance(silent[-1], TerminalEvent) and (silent[-1].state, silent[-1].reason) == ("failed", "empty_answer")


def test_an_answers_markers_quote_its_claims_and_a_marker_without_a_source_cites_nothing() -> None:
    sources = [Citation(citation_id="1", marker=1, doc_id="doc-a"), Citation(citation_id="2", marker=2, doc_id="b")]
    content = "".join(x.get("response", "") for x in LINES)
    cited = cite_sources(content, sources, id_prefix="run:")
    by_id = {c.citation_id: c for c in cited}
    assert by_id["run:1#1"].quote == "Badges kept value" and by_id["run:1#1"].doc_id == "doc-a"
    assert by_id["run:[3]#2"].doc_id == "" and by_id["run:[3]#2"].quote == "Unknown claim"
    assert by_id["2"].quote == "", "a source the text never marks stays one citation, without a quote"


def test_the_rigs_functions_see_the_request_and_the_ledger() -> None:
    reader = Reader({"doc": "documents[?id == var('doc_id')] | [0].id", "name": "basename(path)",
                     "parts": "split(lower(code), '-')", "mine": "doc_of('x/a.pdf')"})
    data = {"documents": [{"id": "d1"}, {"id": "d2"}], "path": "in/put/file.pdf", "code": "A-B"}
    read = reader.read(data, options({"doc_id": "d2"}, {"a.pdf": "doc-a"}.get))
    assert read == {"doc": "d2", "name": "file.pdf", "parts": ["a", "b"], "mine": "doc-a"}


@pytest.mark.parametrize(("http", "message"), [
    ({"search": {"request": {"path": "/s"}, "result": "shout(hits)"}}, "unknown function shout"),
    ({"upload": {"request": {"path": "/u", "multipart": {"file": "{file}"}}, "result": {"track_id": "t"},
                 "poll": {"request": {"path": "/t/{ticket}"}, "until": "done"}}}, "upload.poll.request uses {ticket}"),
    ({"ask": {"request": {"path": "/q"}, "stream": {"format": "ndjson", "events": [{"type": "token"}]}}},
     "or `end: close`"),
    ({"document": {"request": {"path": "/d/{doc_id}"}, "fallback": {"request": {"path": "/all/{project}"}}}},
     "document.fallback.request uses {project}"),
])
def test_every_new_rule_is_checked_when_the_file_is_read(http: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("{", r"\{").replace("(", r"\(")):
        HttpSpec.model_validate(http)


def test_without_sessions_a_question_is_its_own_conversation_and_without_me_login_names_the_account() -> None:
    adapter = HttpAdapter("http://127.0.0.1:9", http={
        "login": {"request": {"method": "POST", "path": "/login"}, "result": {"token": "t"}},
        "ask": {"request": {"method": "POST", "path": "/q", "json": {"q": "{content}"}}, "stream": STREAM}})
    caps = adapter.capabilities()
    assert not caps.sessions and not caps.identity and not caps.projects and not caps.run_detail
    assert caps.missing("run_tool_calls", "trace_ids", "end_reasons") == ["run_tool_calls", "trace_ids", "end_reasons"]
    opened = adapter.open_session(Auth(token="t", user_id="u", username="u"), "", ["d1"])
    assert opened.session_id.startswith("rig-conversation-") and opened.model_extra == {"local": True}
    with pytest.raises(CapabilityMissing, match="sessions"):
        adapter.session(None, opened.session_id)
    with pytest.raises(ValueError, match="no capability named 'sesions'"):
        caps.missing("sesions")


class _Slow(BaseHTTPRequestHandler):
    """An answer streamed a piece every 50 ms for 5 s; records whether the client went away before the end."""

    gone = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/x-ndjson")
        self.end_headers()
        try:
            for i in range(100):
                self.wfile.write(json.dumps({"response": f"piece {i} "}).encode() + b"\n")
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            _Slow.gone.set()


@pytest.fixture()
def slow() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Slow.gone.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_stop_by_disconnect_closes_the_stream_and_ends_the_run_as_the_rig_did_it(slow: str) -> None:
    adapter = HttpAdapter(slow, http={"ask": {"request": {"method": "POST", "path": "/q", "json": {"q": "{content}"}},
                                              "stream": STREAM}, "stop": "disconnect"})
    assert adapter.capabilities().stop == "disconnect"
    auth = Auth(token="t", user_id="u", username="u")
    opened = adapter.open_session(auth, "", [])
    run = adapter.ask(auth, opened.session_id, "q")
    stream = adapter.events(auth, run.run_id)
    first = next(stream)
    assert isinstance(first, TokenEvent)
    adapter.stop(auth, run.run_id)
    rest = list(stream)
    assert len(rest) == 1 and isinstance(rest[0], TerminalEvent)
    assert (rest[0].state, rest[0].reason, rest[0].data["derived"]) == ("stopped", "user_stop", "client_disconnect")
    assert _Slow.gone.wait(10), "the server saw the client go away"
    adapter.close()


class _Tracked(BaseHTTPRequestHandler):
    """Uploads answer a track id; the track's document appears on the third read (with a hash of its own)."""

    reads = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._json({"track": "t1"})

    def do_GET(self) -> None:  # noqa: N802
        _Tracked.reads += 1
        docs = [{"id": "doc-1", "state": "ok", "hash": "f" * 64}] if _Tracked.reads >= 3 else []
        self._json({"docs": docs})


def test_a_poll_reads_the_document_behind_a_track_id_and_the_rigs_own_hash_is_kept(tmp_path: Any) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tracked)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Tracked.reads = 0
    try:
        adapter = HttpAdapter(f"http://127.0.0.1:{server.server_address[1]}", http={"upload": {
            "request": {"method": "POST", "path": "/u", "multipart": {"file": "{file}"}}, "result": {"track_id": "track"},
            "poll": {"request": {"path": "/track/{track_id}"}, "until": "length(docs) > `0`", "interval_s": 0.01,
                     "result": {"doc_id": "docs[0].id", "status": "docs[0].state", "sha256": "docs[0].hash"},
                     "values": {"status": {"ok": "ready"}}}}})
        pdf = tmp_path / "paper.pdf"
        pdf.write_bytes(b"%PDF-1.4 a paper")
        up = adapter.upload(Auth(token="t", user_id="u", username="u"), "", pdf)
    finally:
        server.shutdown()
        server.server_close()
    assert _Tracked.reads == 3 and (up.doc_id, up.status) == ("doc-1", "ready")
    assert up.sha256 == hashlib.sha256(pdf.read_bytes()).hexdigest() and up.reported_sha256 == "f" * 64
    entry = adapter.uploads.entry("doc-1")
    assert entry is not None and (entry.track_id, entry.filename) == ("t1", "paper.pdf")
    assert adapter.uploads.doc_of("paper.pdf") == "doc-1"


# -- the language, completed: empty objects left out, lookups, reading on after the terminal event --------------------

def test_an_object_left_empty_by_its_placeholders_is_left_out_and_a_question_mark_drops_empty_values() -> None:
    from rig.adapters.http.render import render
    from rig.adapters.http.spec import Request
    request = Request.model_validate({"method": "POST", "path": "/q", "json": {
        "q": "{content}", "search": {"filters": {"document_id": {"$in": "{scope?}"}}, "limit": 10}, "tags": ["{t}"]}})
    scoped = json.loads(render(request, {"content": "x", "scope": ["d1"], "t": "a"}).body or b"")
    assert scoped == {"q": "x", "search": {"filters": {"document_id": {"$in": ["d1"]}}, "limit": 10}, "tags": ["a"]}
    for scope in (None, []):
        plain = json.loads(render(request, {"content": "x", "scope": scope, "t": None}).body or b"")
        assert plain == {"q": "x", "search": {"limit": 10}}  # never {"document_id": {}}, never "tags": []
    kept_empty = Request.model_validate({"path": "/q", "json": {"scope": "{scope}"}})
    assert json.loads(render(kept_empty, {"scope": []}).body or b"") == {"scope": []}  # without `?`, [] is a value


class _Store(BaseHTTPRequestHandler):
    """Users listed by name (a lookup finds B's id); a members route that needs that id; an SSE answer that sends its
    end, then saves the answer and only then closes (what a client that closes at `done` loses)."""

    saved: list[str] = []
    members: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._json({"results": [{"id": "u-a", "email": "alice"}, {"id": "u-b", "email": "bob"}]})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.startswith("/collections/"):
            _Store.members.append(self.path.rsplit("/", 1)[-1])
            return self._json({"ok": True})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for line in (b'event: message\ndata: {"delta": "Saved text."}\n\n', b"event: done\ndata: [DONE]\n\n"):
            self.wfile.write(line)
            self.wfile.flush()
        try:  # the answer is written after the end was sent, unless the client went away meanwhile
            for _ in range(6):
                time.sleep(0.05)
                self.wfile.write(b": saving\n\n")
                self.wfile.flush()
        except OSError:
            return
        _Store.saved.append("Saved text.")


@pytest.fixture()
def store() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Store.saved, _Store.members = [], []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_lookup_gives_the_request_a_value_only_another_request_knows(store: str) -> None:
    http = {"create_project": {"request": {"method": "POST", "path": "/p"}, "result": {"project_id": "'c1'"}},
            "projects": {"request": {"path": "/p"}},
            "add_member": {"lookup": {"member_id": {"request": {"path": "/users"},
                                                    "value": "results[?email == var('member')].id | [0]"}},
                           "request": {"method": "POST", "path": "/collections/{project_id}/users/{member_id}"}}}
    adapter = HttpAdapter(store, http=http)
    adapter.add_member(Auth(token="t", user_id="u-a", username="alice"), "c1", "bob")
    assert _Store.members == ["u-b"]
    with pytest.raises(Exception, match="lookup member_id found nothing"):
        adapter.add_member(Auth(token="t", user_id="u-a", username="alice"), "c1", "carol")
    adapter.close()
    with pytest.raises(ValidationError, match=r"add_member.lookup.member_id.request uses \{nobody\}"):
        HttpSpec.model_validate({"add_member": {"lookup": {"member_id": {"request": {"path": "/u/{nobody}"},
                                                                         "value": "id"}},
                                                "request": {"method": "POST", "path": "/m/{member_id}"}}})


@pytest.mark.parametrize("after_end", ["close", "drain"])
def test_after_the_end_the_rig_reads_on_until_the_target_closes_when_told(store: str, after_end: str) -> None:
    stream = {"format": "sse", "after_end": after_end, "events": [
        {"event": "message", "type": "token", "data": {"text": "data.delta", "kind": "'answer'"}},
        {"event": "done", "type": "done", "data": {"state": "'completed'", "reason": "'completed'"}}]}
    adapter = HttpAdapter(store, http={"ask": {"request": {"method": "POST", "path": "/agent",
                                                           "json": {"q": "{content}"}}, "stream": stream}})
    auth = Auth(token="t", user_id="u", username="u")
    run = adapter.ask(auth, adapter.open_session(auth, "", []).session_id, "q")
    events = list(adapter.events(auth, run.run_id))
    assert isinstance(events[-1], TerminalEvent) and events[-1].state == "completed"  # the target's own end word
    time.sleep(0.5)
    assert _Store.saved == (["Saved text."] if after_end == "drain" else [])
    adapter.close()


def test_span_citations_quote_the_claim_before_each_marker_and_share_a_repeated_ids_source() -> None:
    text = "Badges kept value[ab12cd3]\nWelfare rose 2.9%[ab12cd3] and sellers left[ef45]"
    items = [{"id": "ab12cd3", "span": {"start": 17}, "payload": {"document_id": "d1", "id": "c1"}},
             {"id": "ab12cd3", "span": {"start": 44}, "payload": None},
             {"id": "ef45", "span": {"start": 70}, "payload": None}]
    rule = Reader("span_citations(content, cites)[?payload].{citation_id: id, doc_id: payload.document_id, "
                  "chunk_id: payload.id, quote: quote}")
    read = rule.read({"content": text, "cites": items}, options())
    assert read == [{"citation_id": "ab12cd3", "doc_id": "d1", "chunk_id": "c1", "quote": "Badges kept value"},
                    {"citation_id": "ab12cd3", "doc_id": "d1", "chunk_id": "c1", "quote": "Welfare rose 2.9%"}]
