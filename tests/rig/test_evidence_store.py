"""The evidence store commits as it goes and redacts on the way in."""

from __future__ import annotations

from pathlib import Path

from rig.evidence import EvidenceStore
from rig.measure.events import Measure
from rig.redact import Redactor
from rig.verdict import Item, Verdict


def test_everything_written_is_readable_by_a_second_connection(tmp_path: Path) -> None:
    redactor = Redactor()
    redactor.add("pw-very-secret")
    store = EvidenceStore(tmp_path / "e.sqlite3", redactor)
    store.begin_case(1, 5, "可靠性-05-1", "登录与隔离", "退出登录后的授权")
    eid = store.add_evidence(1, 5, "http", "POST /login", {"password": "pw-very-secret", "note": "pw-very-secret"})
    store.add_item(1, 5, Item(name="revoked", verdict=Verdict.PASS, reason="401", evidence_ids=[eid]))
    store.add_measures([Measure(code="T4", source="client", value=12.5, run_id="r1")])
    # A second reader sees it all before the case ends (nothing waits for a final flush).
    reader = EvidenceStore(tmp_path / "e.sqlite3")
    assert reader.cases()[0].status == "running"
    assert reader.items(1, 5)[0].evidence_ids == [eid]
    assert reader.measures("T4")[0].value == 12.5
    for f in tmp_path.iterdir():
        assert b"pw-very-secret" not in f.read_bytes(), f
    store.end_case(1, 5, Verdict.PASS, "ok")
    assert reader.done_cases() == {(1, 5)}
