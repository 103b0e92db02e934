"""`rig load` against an OpenAI-compatible chat endpoint described in YAML alone (docs/targets/openai.rig.yaml), served
by the in-process-cheap mock `workbench.openai_compat`, which logs when it took each request and sent each token:
the rig reports T4, ITL, TPOT and output tokens per second, reads the usage chunk of the stream, and its figures
agree with the endpoint's own log."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rig.adapters import load_adapter_class
from rig.adapters.http import HttpAdapter
from rig.config import load_config
from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
TOKENS, DELAY_MS = 12, 20.0


@dataclass
class Endpoint:
    url: str
    log: Path


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[Endpoint]:
    port_file, log = tmp_path / "port", tmp_path / "sent.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "workbench.openai_compat", "--port-file", str(port_file),
                             "--log", str(log), "--tokens", str(TOKENS), "--delay-ms", str(DELAY_MS),
                             "--key", "sekret-key"], cwd=ROOT)
    try:
        assert wait_until(lambda: port_file.exists() and port_file.read_text().strip() != "" or proc.poll() is not None,
                          30.0, interval_s=0.05), "the mock endpoint never listened"
        assert proc.poll() is None, "the mock endpoint exited"
        yield Endpoint(f"http://127.0.0.1:{port_file.read_text().strip()}", log)
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_load_on_an_openai_endpoint_reports_the_answers_pace_as_the_endpoint_sent_it(
        endpoint: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIG_OPENAI_KEY", "sekret-key")
    monkeypatch.setenv("RIG_OPENAI_MODEL", "mock")
    result = run_load(LoadOptions(target=endpoint.url, config=ROOT / "docs" / "targets" / "openai.rig.yaml", users=3,
                                  spawn_rate=3, duration_s=6, think_min_s=0.05, think_max_s=0.1, out=tmp_path / "load",
                                  reports_root=tmp_path))
    summary = result.summary
    assert summary is not None and summary.delivered_runs and summary.error_ratio == 0.0
    assert {"T4", "T5", "ITL", "TPOT"} <= set(summary.t_codes)
    assert summary.tokens_out_per_s and summary.tokens_out_per_s > 0
    store = EvidenceStore(tmp_path / "load" / "evidence.sqlite3")
    try:
        rows = store.measures()
    finally:
        store.close()
    outputs = [m for m in rows if m.code == "tokens_out"]
    assert outputs and all(m.source == "server" and m.value == TOKENS for m in outputs)  # read from the usage chunk
    assert {m.value for m in rows if m.code == "T12" and m.label == "output"} == {float(TOKENS)}
    sent = [json.loads(line) for line in endpoint.log.read_text().splitlines()]
    gaps = [(b - a) / 1e6 for s in sent for a, b in zip(s["sent_ns"], s["sent_ns"][1:], strict=False)]
    server_itl = statistics.median(gaps)
    rig_itl = summary.t_codes["ITL"].p50 or 0.0
    # the same pace on both sides of the socket: the rig's gaps are the endpoint's, give or take the client's own
    # scheduling (a ratio, not a time: true on a busy machine too)
    assert 0.5 * server_itl <= rig_itl <= 2.0 * server_itl, (rig_itl, server_itl)
    assert len(sent) >= summary.runs  # every run the rig counted, the endpoint served


def test_a_user_that_asks_for_hours_remembers_a_bounded_number_of_runs(
        endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's session and question are kept for later operations on it (stop, resume, its record), the latest
    `runs_kept` of them: a load user asks thousands of questions and must not hold them all."""
    monkeypatch.setenv("RIG_OPENAI_KEY", "sekret-key")
    monkeypatch.setenv("RIG_OPENAI_MODEL", "mock")
    config = load_config(ROOT / "docs" / "targets" / "openai.rig.yaml")
    adapter = load_adapter_class(config.target.adapter).connect(endpoint.url, options=config.target.adapter_options())
    assert isinstance(adapter, HttpAdapter)
    adapter.runs_kept = 3
    try:
        auth = adapter.login("key-a", "sekret-key")
        session = adapter.open_session(auth, "", []).session_id
        runs = []
        for i in range(7):
            run_id = adapter.ask(auth, session, f"question {i}").run_id
            assert list(adapter.raw_events(auth, run_id))  # read to its end, as a load user does
            runs.append(run_id)
        assert list(adapter._run_values) == list(adapter._run_sessions) == runs[-3:]
        assert adapter._run_values[runs[-1]]["content"] == "question 6"
    finally:
        adapter.close()
