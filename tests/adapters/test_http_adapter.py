"""The declarative adapter for real: the reference workbench driven from YAML alone agrees with WorkbenchAdapter
item for item, a load run measures its stream, and a target that answers a question with an NDJSON stream is
timed from that answer."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from rig.adapters.http import HttpAdapter
from rig.gate.session import GateOptions, run_gate
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.measure.derive import run_measures
from rig.measure.transcript import RunTranscript
from rig.ports import free_port
from rig.target.embedded import EmbeddedWorkbench
from rig.verdict import Verdict

DOCS = Path(__file__).resolve().parents[2] / "docs"
PASSWORDS = {"RIG_HTTP_PW_A": f"pw-a-{uuid.uuid4().hex[:10]}", "RIG_HTTP_PW_B": f"pw-b-{uuid.uuid4().hex[:10]}"}
CORE_CASES = [1, 2, 3, 4, 6, 7, 12, 13, 17, 33]  # isolation, upload, ask, stream, export


def _configs(tmp: Path, url: str) -> tuple[Path, Path]:
    """The same target and accounts twice: described in YAML (docs/http-target.rig.yaml), and the built-in adapter."""
    accounts = {"a": {"username": "http-a", "password_env": "RIG_HTTP_PW_A"},
                "b": {"username": "http-b", "password_env": "RIG_HTTP_PW_B"}}
    described = yaml.safe_load((DOCS / "http-target.rig.yaml").read_text(encoding="utf-8"))
    described["target"]["url"] = url
    described["accounts"] = accounts
    http = tmp / "http.rig.yaml"
    http.write_text(yaml.safe_dump(described, allow_unicode=True), encoding="utf-8")
    builtin = tmp / "builtin.rig.yaml"
    builtin.write_text(yaml.safe_dump({"target": {"url": url}, "accounts": accounts}), encoding="utf-8")
    return http, builtin


@pytest.fixture(scope="module")
def workbench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedWorkbench, Path, Path]]:
    tmp = tmp_path_factory.mktemp("http-target")
    target = EmbeddedWorkbench(tmp / "wb")
    target.start()
    try:
        target.add_account("http-a", PASSWORDS["RIG_HTTP_PW_A"])
        target.add_account("http-b", PASSWORDS["RIG_HTTP_PW_B"])
        with pytest.MonkeyPatch.context() as mp:
            for k, v in PASSWORDS.items():
                mp.setenv(k, v)
            yield (target, *_configs(tmp, target.url))
    finally:
        target.stop()


def test_yaml_alone_drives_the_core_cases_as_the_builtin_adapter_does(
        workbench: tuple[EmbeddedWorkbench, Path, Path], tmp_path: Path) -> None:
    target, http, builtin = workbench
    results = {}
    for name, config in (("http", http), ("builtin", builtin)):
        result = run_gate(GateOptions(target=target.url, config=config, cases=CORE_CASES, out=tmp_path / name))
        results[name] = {(c.case_id, i.name): i.verdict for c in result.data.cases for i in c.items}
        manifest = json.loads((result.run_dir / "manifest.json").read_text())
        assert manifest["adapter"] == ("rig.adapters.http:HttpAdapter" if name == "http" else "rig.adapters:WorkbenchAdapter")
    assert results["http"] == results["builtin"]
    # an external workbench without its test-only control and without a model proxy: nothing can hold a run in
    # flight for another account to try to stop, and it sends no spans to this gate's receiver
    blocked = {k for k, v in results["http"].items() if v == Verdict.BLOCKED}
    assert blocked == {(2, "anon_stop"), (2, "anon_resume"), (4, "b_stop"), (4, "b_resume"),
                       (13, "self_report_matches_spans")}
    assert len(results["http"]) > 30 and set(results["http"].values()) == {Verdict.PASS, Verdict.BLOCKED}


@pytest.mark.slow
def test_a_load_run_through_it_measures_the_stream(workbench: tuple[EmbeddedWorkbench, Path, Path],
                                                  tmp_path: Path) -> None:
    target, http, _ = workbench
    result = run_load(LoadOptions(target=target.url, config=http, users=4, workers=2, duration_s=15,
                                  think_min_s=0.2, think_max_s=0.5, out=tmp_path / "load", metrics_port=free_port()))
    summary = result.summary
    assert summary is not None and summary.workers == 2 and summary.error_ratio == 0
    assert all(summary.t_codes[code].count > 0 for code in ("T3", "T4", "T5")), summary.t_codes


# -- a target unlike the workbench: the question's answer is an NDJSON stream ------------------------------------

CHAT_SPEC: dict[str, Any] = {
    "auth": {"send": "header", "header": "x-session", "value": "{token}"},
    "login": {"request": {"method": "POST", "path": "/auth", "form": {"user": "{username}", "pass": "{password}"}},
              "result": {"token": "session.key", "user_id": "session.who"}},
    "me": {"request": {"path": "/whoami"}, "result": {"user_id": "id", "username": "name"}},
    "create_project": {"request": {"method": "POST", "path": "/spaces"}, "result": {"project_id": "id"}},
    "projects": {"request": {"path": "/spaces"}, "items": "spaces", "result": {"project_id": "id", "name": "title"}},
    "upload": {"request": {"method": "POST", "path": "/spaces/{project_id}/files", "multipart": {"upload": "{file}"}},
               "result": {"doc_id": "id", "sha256": "hash", "status": "state"}, "values": {"status": {"done": "ready"}}},
    "documents": {"request": {"path": "/spaces/{project_id}/files"}, "items": "@",
                  "result": {"doc_id": "id", "sha256": "hash", "status": "state"}, "values": {"status": {"done": "ready"}}},
    "document": {"request": {"path": "/files/{doc_id}"}, "result": {"doc_id": "id", "sha256": "hash", "status": "state"},
                 "values": {"status": {"done": "ready"}}},
    "open_session": {"request": {"method": "POST", "path": "/chats"},
                     "result": {"session_id": "id", "effective_scope": "`[]`"}},
    "session": {"request": {"path": "/chats/{session_id}"},
                "result": {"session_id": "id", "project_id": "''", "scope": "`[]`"}},
    "ask": {"request": {"method": "POST", "path": "/chats/{session_id}/ask", "json": {"q": "{content}"}},
            "result": {"run_id": "headers.\"x-turn\""},
            "stream": {"format": "ndjson", "events": [
                {"when": "data.t == 'searching'", "type": "status", "data": {"stage": "'search'", "text": "data.note"}},
                {"when": "data.t == 'chunk'", "type": "token", "data": {"text": "data.s", "kind": "'answer'"}},
                {"when": "data.t == 'fin'", "type": "done", "data": {"state": "'completed'", "reason": "'completed'"}}]}},
    "capabilities": {"run_timings": False, "end_reasons": False},
}
LINES = [{"t": "searching", "note": "looking"}, {"t": "chunk", "s": "Buyer "}, {"t": "chunk", "s": "protection."},
         {"t": "fin"}]
GAP_S = 0.05  # the fake target writes a line every 50 ms, as a model streams


class ChatTarget(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, data: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        for k, v in {"content-type": "application/json", "content-length": str(len(body)), **(headers or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path == "/auth":
            self._json({"session": {"key": "k-1", "who": "u-1"}},
                       {"set-cookie": "sid=k-1; Path=/; HttpOnly, theme=dark; Path=/"})
        elif self.path.endswith("/ask"):
            assert self.headers["x-session"] == "k-1"
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson")
            self.send_header("x-turn", "turn-7")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for line in LINES:
                data = (json.dumps(line) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                time.sleep(GAP_S)
            self.wfile.write(b"0\r\n\r\n")
        else:
            self._json({"id": "c-1"})

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/whoami":
            who = self.headers.get("x-session") or self.headers.get("x-api-key") or \
                (self.headers.get("cookie") or "").removeprefix("sid=")
            if who not in ("k-1", "key-42"):
                self.send_response(401)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            self._json({"id": "u-1" if who == "k-1" else "u-42", "name": "alice"})
            return
        self._json({"id": "c-1"})


@pytest.fixture()
def chat_target() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatTarget)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_ndjson_answer_is_timed_from_the_question(chat_target: str) -> None:
    adapter = HttpAdapter(chat_target, http=CHAT_SPEC)
    try:
        auth = adapter.login("alice", "secret")
        assert (auth.token, auth.user_id) == ("k-1", "u-1")
        caps = adapter.capabilities()
        assert caps.stream == "ndjson" and caps.missing("stop", "resume", "export=md", "direct_search") == [
            "stop", "resume", "export=md", "direct_search"]
        sub = adapter.ask(auth, "c-1", "What did buyer protection change?")
        assert sub.run_id == "turn-7"
        run = RunTranscript(run_id=sub.run_id, question="q", submit_ns=sub.submit_ns, accepted_ns=sub.accepted_ns)
        run.events.extend(adapter.events(auth, sub.run_id))
        assert [e.event for e in run.events] == ["status", "token", "token", "done"]
        assert run.answer == "Buyer protection."
        rows = {m.code: m.value for m in run_measures(run) if m.source == "client"}
        assert {"T3", "T4", "T5"} <= set(rows)
        # each event was stamped as its line arrived, not when the stream ended
        assert rows["T3"] < rows["T4"] < rows["T5"] and rows["T5"] - rows["T4"] >= 2 * GAP_S * 1000 * 0.9
    finally:
        adapter.close()


def test_a_session_cookie_and_an_api_key_log_in_too(chat_target: str) -> None:
    cookie_spec = {**CHAT_SPEC, "auth": {"send": "cookie", "cookie": "sid", "token_from": "cookie"},
                   "login": {**CHAT_SPEC["login"], "result": {"user_id": "session.who"}}}
    adapter = HttpAdapter(chat_target, http=cookie_spec)
    try:
        auth = adapter.login("alice", "secret")
        assert auth.token == "k-1" and adapter.me(auth).user_id == "u-1"
        assert adapter.me_status_with_cookies({"sid": "stale"}) == 401
    finally:
        adapter.close()
    key_spec = {k: v for k, v in CHAT_SPEC.items() if k != "login"}
    key_spec["auth"] = {"send": "header", "header": "x-api-key", "value": "{token}"}
    adapter = HttpAdapter(chat_target, http=key_spec)
    try:
        auth = adapter.login("alice", "key-42")  # no login request: the password is the key, `me` says who it is
        assert (auth.token, auth.user_id) == ("key-42", "u-42")
    finally:
        adapter.close()
