"""The rig against a real R2R 3.6.6 server (`make test-peers`), through docs/targets/r2r.rig.yaml alone and with R2R's
stock rate limits.

R2R is the third shape: collections shared by user id, a document id that is the file name and its owner, a corrupt
PDF refused inside the upload, conversations whose saved answers name no run, an agent stream that saves its answer
after `done`, no run records and no stop but closing the stream. The gate must decide items in at least 22 of the 38
cases, FAIL only where R2R itself breaks a promise — each such behaviour proved a second time here over R2R's own
API with no rig code — and name the capability behind every BLOCKED item; `rig target check` passes; `rig quality`
asks every turn it can and names why for the rest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.pdftext import page_texts, squash
from rig.quality.session import QualityOptions, run_quality
from rig.verdict import Verdict
from tests.peers.harness import serving
from tests.peers.r2r import R2R, installed

pytestmark = pytest.mark.peer

# R2R's own behaviours the gate reports, each proved below without the rig
OWN_FAILURES = {
    (4, "b_post_message"),  # another account asks in A's conversation by its id, and its question is saved there
    (4, "b_no_message_added"),  # ... which A's re-read then shows
    (4, "b_upload"),  # another account uploads into A's collection, which it cannot even read
    (4, "b_project_unchanged"),  # ... and A's collection lists the stranger's document
    (6, "no_false_ready"),  # P15 and P16, text covers over image-only bodies, reported `success`
    (8, "P15"), (8, "P16"),  # their scanned bodies are not searchable
    (9, "partial_is_honest"),  # a PDF with an undecodable page reported `success`
    (16, "empty_answer_failed"),  # an empty model answer streamed to its `done`, no error
}
DECIDED = (Verdict.PASS, Verdict.FAIL, Verdict.U)  # an item that ran; BLOCKED and N/A items did not


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[R2R]:
    if not installed():
        pytest.fail("R2R is not installed: `make test-peers` installs it into its cached environment")
    with serving(R2R(tmp_path_factory.mktemp("r2r")).start()) as running:
        assert isinstance(running, R2R)
        yield running


@pytest.fixture(scope="module")
def gate(peer: R2R, tmp_path_factory: pytest.TempPathFactory) -> GateResult:
    return run_gate(GateOptions(target=peer.url, config=peer.root / "rig.yaml",
                                out=tmp_path_factory.mktemp("gate") / "run"))


def _items(gate: GateResult) -> list[tuple[int, Any]]:
    return [(c.case_id, i) for c in gate.data.cases for i in c.items]


def test_target_check_passes_from_the_yaml_alone(peer: R2R) -> None:
    done = subprocess.run([sys.executable, "-m", "rig.cli", "target", "check", "--config", str(peer.root / "rig.yaml"),
                           "--json"], capture_output=True, text=True, timeout=600, env=dict(os.environ))
    result = json.loads(done.stdout)
    rows = {r["operation"]: r for r in result["rows"]}
    assert done.returncode == 0 and result["ok"], [r for r in result["rows"] if r["outcome"] == "failed"]
    assert rows["session (read back)"]["extracted"].startswith("2 message(s); the answer names no run")
    assert rows["stop"]["gives"] == "stop=disconnect" and rows["run"]["outcome"] == "absent"
    assert len(result["load_accounts"]) == 2  # both accounts get the load's collection (by user id)


def test_the_gate_fails_only_where_r2r_breaks_a_promise(gate: GateResult) -> None:
    fails = {(case_id, i.name) for case_id, i in _items(gate) if i.verdict == Verdict.FAIL}
    assert fails == OWN_FAILURES
    ran = {c for c, i in _items(gate) if i.verdict in DECIDED}
    assert len(ran) >= 22, sorted(ran)
    print(f"\n{len(ran)} of 38 cases ran at least one item on R2R: {sorted(ran)}")


def test_saved_answers_were_linked_by_the_rigs_correlation(gate: GateResult) -> None:
    store = EvidenceStore(gate.run_dir / "evidence.sqlite3")
    try:
        linked = [e.data for e in store.evidence(kind="observation") if "linked by the rig" in str(e.title)]
        unlinked = [e.title for e in store.evidence(kind="observation") if "no saved answer links" in str(e.title)]
    finally:
        store.close()
    assert linked and all(n["how"] in ("text", "question") for d in linked for n in d["links"])
    assert unlinked == []
    items = {(c, i.name): i.verdict for c, i in _items(gate)}
    assert items[(17, "saved_text_equal")] == items[(17, "can_continue")] == Verdict.PASS


def test_the_setup_met_r2rs_shape_and_said_how(gate: GateResult) -> None:
    store = EvidenceStore(gate.run_dir / "evidence.sqlite3")
    try:
        setup = store.meta("setup")
        said = [e.data for e in store.evidence(kind="setup")]
    finally:
        store.close()
    ingest = {(e["role"], e["variant_id"] or e["paper_id"]): e for e in setup["ingest"]}
    corrupt = ingest[("isolated", "X-CORRUPT")]
    assert corrupt["refused"] and "500" in corrupt["refused"]  # (its failed record is in no collection of A's)
    assert corrupt["status"] == "refused" and corrupt["error"]["code"] == "pdf_corrupt"  # named by `refusal:`
    copy = ingest[("isolated", "P32")]  # P32 again for the same account: 409, so a name of its own
    assert copy["renamed"] and copy["upload_name"] != ingest[("library", "P32")]["upload_name"]
    assert any("refused" in d["why"] for d in said) and any("uploaded as" in d["why"] for d in said)


# -- R2R's own behaviours, over its own API --------------------------------------------------------------------

def _token(peer: R2R, key: str) -> str:
    account = peer.accounts[key]
    reply = httpx.post(f"{peer.url}/v3/users/login", data={"username": account.username, "password": account.password},
                       timeout=30)
    reply.raise_for_status()
    return str(reply.json()["results"]["access_token"]["token"])


def _client(peer: R2R, key: str) -> httpx.Client:
    return httpx.Client(base_url=peer.url, headers={"authorization": f"Bearer {_token(peer, key)}"}, timeout=120)


def test_r2r_saves_another_accounts_question_in_a_conversation_by_its_id(peer: R2R, gate: GateResult) -> None:
    with _client(peer, "a") as a, _client(peer, "b") as b:
        conversation = a.post("/v3/conversations").raise_for_status().json()["results"]["id"]
        marker = f"B's question {uuid.uuid4().hex[:8]}"
        asked = b.post("/v3/retrieval/agent", json={"message": {"role": "user", "content": marker},
                                                    "conversation_id": conversation, "mode": "rag",
                                                    "rag_tools": ["search_file_knowledge"]})
        assert asked.status_code == 200, asked.text
        saved = a.get(f"/v3/conversations/{conversation}").raise_for_status().json()["results"]
        assert any(m["message"]["content"] == marker for m in saved), "A's conversation holds B's question"


def test_r2r_takes_an_upload_into_a_collection_the_uploader_cannot_read(peer: R2R, gate: GateResult) -> None:
    corpus, manifest = ensure_corpus()
    with _client(peer, "a") as a, _client(peer, "b") as b:
        collection = a.post("/v3/collections", json={"name": f"A only {uuid.uuid4().hex[:6]}"}).raise_for_status(
        ).json()["results"]["id"]
        assert b.get(f"/v3/collections/{collection}").status_code in (403, 404)  # B cannot read it
        name = f"b-into-a-{uuid.uuid4().hex[:8]}.pdf"
        data = (corpus / manifest.paper("P21").file).read_bytes()
        up = b.post("/v3/documents", files={"file": (name, data, "application/pdf")},
                    data={"collection_ids": json.dumps([collection])})
        assert up.status_code == 202, up.text
        listed = a.get(f"/v3/collections/{collection}/documents").raise_for_status().json()["results"]
        assert any(d["title"] == name for d in listed), "A's collection lists B's document"


def _document(client: httpx.Client, title: str) -> dict[str, Any]:
    listed = client.get("/v3/documents", params={"limit": 1000}).raise_for_status().json()["results"]
    return next(d for d in listed if d["title"] == title)


def _chunks(client: httpx.Client, doc_id: str) -> list[str]:
    """The document's chunks as R2R lists them (it answers 404 for a document that has none)."""
    reply = client.get(f"/v3/documents/{doc_id}/chunks", params={"limit": 1000})
    if reply.status_code == 404:
        return []
    return [c["text"] for c in reply.raise_for_status().json()["results"]]


@pytest.mark.parametrize("paper", ["P15", "P16"])
def test_r2r_reports_a_cover_over_a_scanned_body_a_success(peer: R2R, gate: GateResult, paper: str) -> None:
    _, manifest = ensure_corpus()
    entry = manifest.paper(paper)
    assert entry.image_pages, "the fixture's body is image-only"
    corpus, _ = ensure_corpus()
    cover = squash("".join(page_texts(corpus / entry.file)[p - 1] for p in entry.text_pages))
    with _client(peer, "a") as a:
        doc = _document(a, Path(entry.file).name)
        assert doc["ingestion_status"] == "success"
        texts = _chunks(a, doc["id"])
    # what R2R holds of it is the text cover at most: every chunk stands in the pages that have a text layer
    assert all(squash(t) in cover for t in texts), "no chunk holds text of the scanned body"


def test_r2r_reports_a_pdf_with_an_undecodable_page_a_success(peer: R2R, gate: GateResult) -> None:
    _, manifest = ensure_corpus()
    entry = manifest.variant("P44-BROKEN")
    assert entry.broken_pages, "the fixture has a page whose text layer cannot be decoded"
    with _client(peer, "a") as a:
        assert _document(a, Path(entry.file).name)["ingestion_status"] == "success"


def test_r2r_ends_an_empty_model_answer_done_not_failed(peer: R2R, gate: GateResult) -> None:
    rule = httpx.post(f"{peer.proxy_url}/_rig/rules", json={"mode": "empty", "times": 1, "endpoint": "chat"},
                      timeout=10).raise_for_status().json()["rule_id"]
    try:
        with _client(peer, "a") as a:
            conversation = a.post("/v3/conversations").raise_for_status().json()["results"]["id"]
            body = {"message": {"role": "user", "content": "2.9%指什么？"}, "conversation_id": conversation,
                    "mode": "rag", "rag_tools": ["search_file_knowledge"], "rag_generation_config": {"stream": True}}
            with a.stream("POST", "/v3/retrieval/agent", json=body) as reply:
                assert reply.status_code == 200
                names = [line.split(":", 1)[1].strip() for line in reply.iter_lines() if line.startswith("event:")]
        fired = next(r for r in httpx.get(f"{peer.proxy_url}/_rig/rules", timeout=10).json() if r["rule_id"] == rule)
    finally:
        httpx.delete(f"{peer.proxy_url}/_rig/rules/{rule}", timeout=10)
    assert fired["fired"] == 1  # the model's answer was empty
    assert "message" not in names and "error" not in names and names[-1] == "done", names  # … and R2R said done


def test_r2r_refuses_a_corrupt_pdf_in_the_upload_and_keeps_a_failed_record(peer: R2R) -> None:
    with _client(peer, "a") as a:
        name = f"corrupt-{uuid.uuid4().hex[:8]}.pdf"
        up = a.post("/v3/documents", files={"file": (name, b"%PDF-1.4 not really", "application/pdf")})
        assert up.status_code == 500
        assert _document(a, name)["ingestion_status"] == "failed"


# -- quality through the same YAML ------------------------------------------------------------------------------

def test_a_quality_run_asks_every_turn_it_can_and_names_why_for_the_rest(peer: R2R, tmp_path: Path) -> None:
    result = run_quality(QualityOptions(target=peer.url, config=peer.root / "rig.yaml", out=tmp_path / "quality"))
    results = json.loads((result.run_dir / "results.json").read_text())
    assert len(results["cases"]) == 75
    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    try:
        records = {e.data["record_id"]: e.data for e in store.evidence(kind="quality_turn")}
    finally:
        store.close()
    unasked = {c["record_id"]: c["reason"] for c in results["cases"] if c["record_id"] not in records}
    assert unasked == {"专家-23-2": "precondition: missing capability: scope_change",  # a changed selection
                       "用户-16-2": "precondition: missing capability: scope_change",
                       "用户-23-2": "precondition: missing capability: scope_change",
                       "用户-25-1": "precondition: missing capability: chaos, summaries",  # fixtures only a control makes
                       "对抗-10-1": "precondition: missing capability: chaos"}, unasked
    asked = [r for r in records.values() if r["kind"] in ("conversation", "injection")]
    assert len(asked) == 60 and all(r["state"] == "completed/completed" for r in asked)
    assert all(r["fixture"]["read_from"] == {"answer": "session", "hits": "stream sources"} for r in asked
               if r["kind"] == "conversation")
    searched = [r for r in records.values() if r["kind"] == "direct_tool"]
    assert len(searched) == 10 and all(m["name"] != "recall@10" or m["value"] is not None
                                       for r in searched for m in r["metrics"])
