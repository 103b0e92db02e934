"""One recorded stream and run record through the gate, quality and load paths: the same T-code rows.

The recording is a real run of the reference workbench (`record_run.py`); each path reads it through the
configured adapter as it reads a live target, with the same arrival times, and records into its own
evidence store. Every (code, source, label, value) row must be the same in all three.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rig.measure.sse
from rig.adapters import Capabilities, WorkbenchAdapter
from rig.adapters.models import Auth
from rig.catalog import load_eval_set
from rig.evidence import EvidenceStore
from rig.measure.tcodes import PACE_ITL, PACE_TPOT, TOKENS_OUT, is_tcode
from rig.measure.transcript import RunTranscript
from rig.quality.context import QualityContext
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.target.setup import TargetSetup
from rig.telemetry.otlp_receiver import OtlpReceiver
from rig.telemetry.tracing import noop_tracer
from tests.measure.replay import SUBMIT_NS, Replay, recorded_clock, recording

HERE = Path(__file__).resolve().parent
Row = tuple[str, str, str | None, float]


def _rows(path: Path) -> list[Row]:
    store = EvidenceStore(path)
    try:
        return sorted((m.code, m.source, m.label, m.value) for m in store.measures()
                      if is_tcode(m.code) or m.code in (PACE_ITL, PACE_TPOT, TOKENS_OUT))
    finally:
        store.close()


def _target(data: dict, tmp: Path) -> TargetSession:  # type: ignore[type-arg]
    setup = TargetSetup(embedded=False, target_url="http://replay.invalid", usernames={"a": "a", "b": "b"},
                        project_a="p", project_isolated="p2", project_b_shared="p3", project_b_private="p4", docs={},
                        isolated={}, b_shared_doc="d", b_private_doc="d2", ingest=[])
    auth = Auth(token="t", user_id="u", username="a")
    return TargetSession(adapter=WorkbenchAdapter("http://replay.invalid", transport=Replay(data)), adapter_spec="test",
                         usernames={},
                         auth={"a": auth, "b": auth}, passwords={}, setup=setup, caps=Capabilities(), embedded=None,
                         receiver=OtlpReceiver())


def _gate_path(data: dict, store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    monkeypatch.setattr(rig.measure.sse, "now_ns", recorded_clock(data))
    store = EvidenceStore(store_path)
    target = _target(data, store_path.parent)
    with noop_tracer().case_span(12, "可靠性-12-1", ["T4"], 1) as span:
        ctx = RecordingContext(1, 12, store, target, tracer=noop_tracer(), span=span)
        ctx.read(target.auth["a"], RunTranscript(run_id=data["run_id"], question=data["question"], submit_ns=SUBMIT_NS))
        ctx.close()
    store.close()


def _quality_path(data: dict, store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    monkeypatch.setattr(rig.measure.sse, "now_ns", recorded_clock(data))
    store = EvidenceStore(store_path)
    target = _target(data, store_path.parent)
    turn = load_eval_set().quality[20]
    with noop_tracer().case_span(21, turn.record_id, turn.performance_codes, 1) as span:
        ctx = QualityContext(21, turn, store, target, tracer=noop_tracer(), span=span)
        ctx.read(target.auth["a"], RunTranscript(run_id=data["run_id"], question=data["question"], submit_ns=SUBMIT_NS))
        ctx.close()
    store.close()


@pytest.mark.parametrize("drop_source", [False, True], ids=["as-recorded", "usage-source-absent"])
def test_gate_quality_and_load_derive_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    drop_source: bool) -> None:
    data = recording(drop_source)
    _gate_path(data, tmp_path / "gate.sqlite3", monkeypatch)
    _quality_path(data, tmp_path / "quality.sqlite3", monkeypatch)
    args = [sys.executable, str(HERE / "load_path.py"), str(tmp_path / "load.sqlite3")]
    done = subprocess.run(args + (["--drop-usage-source"] if drop_source else []), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    gate, quality, load = (_rows(tmp_path / f"{p}.sqlite3") for p in ("gate", "quality", "load"))
    assert gate == quality == load
    codes = {(c, s, lbl) for c, s, lbl, _ in gate}
    # the points where the paths used to disagree
    assert ("T3", "server", None) in codes and ("T2", "server", "tool_call") in codes
    assert {("T11", "server", n) for n in ("retrieval_model_requests", "embedding_requests")} <= codes
    assert any(c == "T2" and (lbl or "").startswith("stage:") for c, _, lbl in codes)
    assert ("T4", "client", "first_text_kind=answer") in codes
    assert {(PACE_ITL, "client", None), (PACE_TPOT, "client", None)} <= codes  # the pace, alike on every path
    reported = "server" if drop_source else "provider"  # what the target said, else "server": never a guess
    assert {("T12", reported, "input"), ("T12", "estimate", "input")} <= codes
    t4 = next(v for c, s, _, v in gate if (c, s) == ("T4", "client"))
    first_answer = next(ms for ms, piece in data["pieces"] if '"kind": "answer"' in piece and "event: token" in piece)
    assert t4 == pytest.approx(first_answer)  # T4 is the first answer token's arrival, not any first event
