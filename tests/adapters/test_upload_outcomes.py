"""One document never stops the setup, over real HTTP: a target that refuses an upload itself has given that
document's ingest outcome (its failed record kept, if any); a busy one (429 with Retry-After) is waited for within
a bound; a duplicate key per account gets the copy a name of its own; another account's document of the same name
is never taken as the rig's."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from rig.adapters.http import HttpAdapter
from rig.adapters.models import Auth
from rig.adapters.pace import RatePace
from rig.corpus_load import upload_one
from rig.fixtures import ensure_corpus

SPEC: dict[str, Any] = {
    "upload": {"request": {"method": "POST", "path": "/p/{project_id}/files", "multipart": {"file": "{file}"}},
               "result": {"doc_id": "id", "status": "state"}},
    "documents": {"request": {"path": "/p/{project_id}/files"}, "items": "@",
                  "result": {"doc_id": "id", "filename": "name", "status": "state", "owner_id": "owner",
                             "error": "error && {code: error}"}},
}


class Store(ThreadingHTTPServer):
    """A document store keyed by (account, file name) — `shared-*` names by file name alone: `busy-*` names answer
    429 twice (Retry-After: 0), `swamped-*` names always (naming no wait), `bad-*` names are refused with a 500
    that keeps a failed record, and `gone-*` with a 422 that keeps none."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.records: list[dict[str, Any]] = [{"id": "theirs", "name": "shared-P32.pdf", "state": "ready",
                                               "owner": "mallory", "project": "p1"}]
        self.tries: dict[str, int] = {}
        self.waits_asked: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Store

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        project = self.path.split("/")[2]
        self._send(200, [r for r in self.server.records if r["project"] == project])

    def do_POST(self) -> None:  # noqa: N802
        project = self.path.split("/")[2]
        body = self.rfile.read(int(self.headers["content-length"]))
        name = re.search(rb'filename="([^"]+)"', body).group(1).decode()  # type: ignore[union-attr]
        owner = self.headers["authorization"].split()[-1]
        tries = self.server.tries[name] = self.server.tries.get(name, 0) + 1
        if name.startswith("busy-") and tries <= 2:
            return self._send(429, {"message": "slow down"}, {"Retry-After": "0"})
        if name.startswith("swamped-"):
            return self._send(429, {"message": "slow down"})
        if any(r["name"] == name and (r["owner"] == owner or name.startswith("shared-")) for r in self.server.records):
            return self._send(409, {"message": f"{name} exists"})
        if name.startswith("gone-"):
            return self._send(422, {"message": "not a PDF"})
        state = "failed" if name.startswith("bad-") else "ready"
        record = {"id": f"d{len(self.server.records)}", "name": name, "state": state, "owner": owner,
                  "project": project, "error": "pdf_corrupt" if state == "failed" else None}
        self.server.records.append(record)
        if state == "failed":
            return self._send(500, {"message": "ingest failed: not a readable PDF"})
        self._send(200, record)


@pytest.fixture()
def store() -> Iterator[Store]:
    server = Store()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _upload(store: Store, name: str, project: str = "p1", spec: dict[str, Any] = SPEC) -> Any:
    corpus, manifest = ensure_corpus()
    entry = manifest.paper("P32")
    adapter = HttpAdapter(store.url, http=spec)
    waits: list[float] = []
    try:
        loaded = upload_one(adapter, Auth(token="alice", user_id="alice", username="alice"), project,
                            corpus / entry.file, entry, name, sleep=waits.append)
    finally:
        adapter.close()
    return loaded, waits


def test_a_refusal_is_the_documents_outcome_with_the_record_it_kept(store: Store) -> None:
    loaded, _ = _upload(store, "bad-P32.pdf")
    assert loaded.refused and "500" in loaded.refused and "not a readable PDF" in loaded.refused
    assert loaded.document is not None and loaded.document.status == "failed" and loaded.doc_id
    gone, _ = _upload(store, "gone-P32.pdf")
    assert gone.refused and "422" in gone.refused and "lists no record" in gone.refused and gone.doc_id == ""


def test_the_description_names_a_refusals_outcome_from_its_status_and_body(store: Store) -> None:
    named = {**SPEC, "upload": {**SPEC["upload"], "refusal": "status == `422` && contains(body.message, 'PDF') && "
                                                              "{code: 'pdf_corrupt', message: body.message} || null"}}
    gone, _ = _upload(store, "gone-P32.pdf", spec=named)
    assert gone.refused_code == "pdf_corrupt" and "not a PDF" in (gone.refused or "")
    bad, _ = _upload(store, "bad-P32.pdf", spec=named)  # a refusal the rule does not name stays unnamed
    assert bad.refused and bad.refused_code is None
    fine, _ = _upload(store, "P32.pdf", spec=named)  # an accepted upload never meets the rule
    assert fine.refused is None and fine.doc_id


def test_a_busy_target_is_waited_for_as_it_asks(store: Store) -> None:
    loaded, waits = _upload(store, "busy-P32.pdf")
    assert loaded.refused is None and loaded.doc_id and waits == [0.0, 0.0]  # its Retry-After, not the rig's guess


def test_a_duplicate_per_account_gets_a_name_of_its_own_and_never_another_accounts_copy(store: Store) -> None:
    first, _ = _upload(store, "P32.pdf", "p1")
    again, _ = _upload(store, "P32.pdf", "p2")  # the same account, another project: its own name there
    assert again.renamed and again.upload_name != "P32.pdf" and again.doc_id != first.doc_id
    reused, _ = _upload(store, "P32.pdf", "p1")  # the same project: the account's own document is reused
    assert reused.reused and reused.doc_id == first.doc_id
    mine, _ = _upload(store, "shared-P32.pdf", "p1")  # refused as mallory's name: never taken as the rig's
    assert mine.reused is None and mine.renamed and mine.doc_id not in ("", "theirs")


def test_a_paced_adapter_waits_out_429s_and_then_lets_the_429_stand(store: Store) -> None:
    corpus, manifest = ensure_corpus()
    entry = manifest.paper("P32")
    waits: list[float] = []
    adapter = HttpAdapter(store.url, http=SPEC)
    adapter.pace = RatePace(sleep=waits.append)
    try:
        loaded = upload_one(adapter, Auth(token="alice", user_id="alice", username="alice"), "p1",
                            corpus / entry.file, entry, "busy-paced.pdf")
        assert loaded.doc_id and waits == [0.0, 0.0] and adapter.pace.by_op == {"upload": 2}
        adapter.pace = RatePace(budget_s=0, sleep=waits.append)  # nothing left to wait: the 429 stands
        refused = upload_one(adapter, Auth(token="alice", user_id="alice", username="alice"), "p1",
                             corpus / entry.file, entry, "swamped-P32.pdf")
        assert refused.refused and "429" in refused.refused and len(waits) == 2
    finally:
        adapter.close()


def test_the_pace_follows_retry_after_else_a_bounded_back_off() -> None:
    pace = RatePace()
    assert pace.next_wait(0, 5.0, 0.0) == 5.0 and pace.next_wait(0, 600.0, 0.0) == 60.0  # capped
    assert [pace.next_wait(i, None, 0.0) for i in range(6)] == [2.0, 4.0, 8.0, 16.0, 32.0, None]
    assert pace.next_wait(4, None, 40.0) is None  # past the budget
