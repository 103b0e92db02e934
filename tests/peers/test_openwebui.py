"""The rig against a real Open WebUI 0.12.4 (`make test-peers`): gated, loaded and timed in its web UI.

The gate may FAIL only where Open WebUI itself breaks a promise, and each such behaviour is proved here a
second time directly over Open WebUI's own HTTP API, with no rig code in between. Everything the adapter
declares absent ends BLOCKED naming it, and a case's other items still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import socketio

from rig.browser.run import BrowserRunOptions, run_browser
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.verdict import Verdict
from tests.peers.openwebui import OpenWebUI, free_port, installed

pytestmark = pytest.mark.peer

# Open WebUI's own behaviours the gate reports, each proved below without the rig
OWN_FAILURES = {
    (5, "revoked_after_logout"),  # a signed-out token still works (no Redis configured)
    (6, "no_false_ready"),  # P16, a text cover over an image-only body, reported completed
    (8, "P16"),  # the same paper, its scanned body not searchable
    (9, "partial_is_honest"),  # a PDF with an undecodable page reported completed
    (16, "empty_answer_failed"),  # an empty model answer saved as a finished message
}


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenWebUI]:
    if not installed():
        pytest.fail("Open WebUI is not installed: `make test-peers` installs it into its cached environment")
    root = tmp_path_factory.mktemp("openwebui")
    instance = OpenWebUI(root).start()
    (root / "rig.yaml").write_text(instance.rig_yaml(), encoding="utf-8")
    saved = dict(os.environ)
    os.environ.update(instance.secrets_env())
    try:
        yield instance
    finally:
        os.environ.clear()
        os.environ.update(saved)
        instance.stop()


@pytest.fixture(scope="module")
def gate(peer: OpenWebUI, tmp_path_factory: pytest.TempPathFactory) -> GateResult:
    return run_gate(GateOptions(target=peer.url, config=peer.root / "rig.yaml",
                                out=tmp_path_factory.mktemp("gate") / "run"))


def _login(peer: OpenWebUI, key: str = "a") -> str:
    account = peer.accounts[key]
    reply = httpx.post(f"{peer.url}/api/v1/auths/signin", json={"email": account.email, "password": account.password},
                       timeout=30)
    reply.raise_for_status()
    return str(reply.json()["token"])


def test_the_gate_fails_only_where_open_webui_breaks_a_promise(gate: GateResult) -> None:
    items = [(c.case_id, i) for c in gate.data.cases for i in c.items]
    fails = {(case_id, i.name) for case_id, i in items if i.verdict == Verdict.FAIL}
    assert fails == OWN_FAILURES
    assert not [(c, i.name) for c, i in items if i.verdict == Verdict.U], "nothing the rig could not observe"
    unnamed = [(c, i.name, i.reason) for c, i in items if i.verdict == Verdict.BLOCKED
               and not i.reason.startswith(("missing capability:", "missing configuration:"))]
    assert unnamed == [], "every BLOCKED item names the capability (or configuration) it lacks"
    ran = {c for c, i in items if i.verdict != Verdict.BLOCKED}
    # the isolation probes of cases 2-4 count although page text and Markdown export are absent
    assert {1, 2, 3, 4, 5, 10, 12, 13, 17, 20, 22, 32, 33, 36} <= ran
    print(f"\n{len(ran)} of 38 cases ran at least one item on Open WebUI")


def test_stop_and_disconnect_run_through_the_rigs_model_proxy(gate: GateResult) -> None:
    store = EvidenceStore(gate.run_dir / "evidence.sqlite3")
    try:
        for case_id in (20, 22):
            fixtures = [e["data"].get("fixture") for e in store.evidence(1, case_id, kind="fixture")]
            assert fixtures and set(fixtures) == {"rig_proxy"}, (case_id, fixtures)
        verdicts = {c.case_id: c.verdict for c in gate.data.cases}
        assert verdicts[22] == Verdict.PASS
        items = {i.name: i.verdict for i in store.items(1, 20)}
        assert items["stop_reached_task"] == Verdict.PASS and items["new_request_served"] == Verdict.PASS
    finally:
        store.close()


# -- Open WebUI's own behaviours, over its own API ------------------------------------------------------------

def test_open_webui_accepts_a_token_after_sign_out(peer: OpenWebUI) -> None:
    token = _login(peer)
    headers = {"authorization": f"Bearer {token}"}
    assert httpx.post(f"{peer.url}/api/v1/auths/signout", headers=headers, timeout=30).status_code == 200
    assert httpx.get(f"{peer.url}/api/v1/auths/", headers=headers, timeout=30).status_code == 200


def _upload(peer: OpenWebUI, token: str, path: Path) -> dict:  # type: ignore[type-arg]
    headers = {"authorization": f"Bearer {token}"}
    with path.open("rb") as fh:
        file_id = httpx.post(f"{peer.url}/api/v1/files/", headers=headers, files={"file": (path.name, fh)},
                             timeout=60).raise_for_status().json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = httpx.get(f"{peer.url}/api/v1/files/{file_id}/process/status", headers=headers, timeout=30).json()
        if status.get("status") in ("completed", "failed"):
            break
        time.sleep(0.2)
    return dict(httpx.get(f"{peer.url}/api/v1/files/{file_id}", headers=headers, timeout=30).json())


def test_open_webui_reports_a_cover_over_a_scanned_body_completed(peer: OpenWebUI) -> None:
    corpus, manifest = ensure_corpus()
    entry = manifest.paper("P16")
    assert entry.image_pages, "the fixture's body is image-only"
    record = _upload(peer, _login(peer), corpus / entry.file)
    content = record["data"].get("content") or ""
    assert record["data"]["status"] == "completed" and content.strip()
    assert "productivity" not in content.lower(), "only the cover's text was extracted"


def test_open_webui_reports_a_pdf_with_an_undecodable_page_completed(peer: OpenWebUI) -> None:
    corpus, manifest = ensure_corpus()
    entry = manifest.variant("P44-BROKEN")
    assert entry.broken_pages
    record = _upload(peer, _login(peer), corpus / entry.file)
    assert record["data"]["status"] == "completed" and not record["data"].get("error")


def test_open_webui_saves_an_empty_model_answer_as_a_finished_message(peer: OpenWebUI) -> None:
    """The model (behind an LLM proxy that strips every answer token) answers nothing; Open WebUI files it done."""
    proxy = subprocess.Popen([sys.executable, "-m", "rig.cli", "chaos", "llm-proxy", "--upstream",
                              f"http://127.0.0.1:{peer.mock_port}/v1", "--listen", f"127.0.0.1:{peer.proxy_port}",
                              "--rule", '{"mode": "empty"}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{peer.proxy_port}/_rig/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        token = _login(peer)
        headers = {"authorization": f"Bearer {token}"}
        done = threading.Event()
        sio = socketio.Client()
        sio.on("events", lambda d: done.set() if (d.get("data") or {}).get("type") == "chat:completion"
               and (d["data"].get("data") or {}).get("done") else None)
        sio.connect(peer.url, socketio_path="/ws/socket.io", auth={"token": token}, transports=["websocket"])
        question, user_id, answer_id = "What is adverse selection?", str(uuid.uuid4()), str(uuid.uuid4())
        model = httpx.get(f"{peer.url}/api/models", headers=headers, timeout=30).json()["data"][0]["id"]
        body = {"model": model, "stream": True, "parent_id": None, "id": answer_id, "session_id": sio.get_sid(),
                "messages": [{"role": "user", "content": question}], "features": {},
                "user_message": {"id": user_id, "role": "user", "content": question, "parentId": None,
                                 "childrenIds": [answer_id], "models": [model], "timestamp": int(time.time())}}
        chat_id = httpx.post(f"{peer.url}/api/chat/completions", headers=headers, json=body,
                             timeout=60).raise_for_status().json()["chat_id"]
        assert done.wait(60)
        sio.disconnect()
        chat = httpx.get(f"{peer.url}/api/v1/chats/{chat_id}", headers=headers, timeout=30).json()
        saved = chat["chat"]["history"]["messages"][answer_id]
        assert saved["done"] is True and not str(saved.get("content") or "").strip() and not saved.get("error")
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


# -- load and browser ------------------------------------------------------------------------------------------

def test_a_distributed_load_run_measures_the_stream(peer: OpenWebUI, tmp_path: Path) -> None:
    result = run_load(LoadOptions(target=peer.url, config=peer.root / "rig.yaml", users=4, workers=2, duration_s=20,
                                  think_min_s=0.5, think_max_s=1.0, out=tmp_path / "load",
                                  metrics_port=free_port()))
    summary = result.summary
    assert summary is not None and summary.workers == 2
    assert all(summary.t_codes[code].count > 0 for code in ("T3", "T4", "T5")), summary.t_codes
    assert summary.requests > 0 and summary.runs > 0
    assert json.loads((result.run_dir / "manifest.json").read_text())["adapter"].endswith(":OpenWebUIAdapter")


@pytest.mark.browser
def test_browser_users_time_its_web_ui(peer: OpenWebUI, tmp_path: Path) -> None:
    summary, result = run_browser(BrowserRunOptions(target=peer.url, config=peer.root / "rig.yaml",
                                                    selectors=Path("openwebui"), users=1, turns=2,
                                                    out=tmp_path / "browser", deadline_s=120))
    assert not result.errors, result.errors
    assert summary["T4"]["count"] == 2 and summary["T5"]["count"] == 2  # type: ignore[index]
