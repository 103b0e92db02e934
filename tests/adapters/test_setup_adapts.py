"""Setup that adapts to a target shaped unlike the workbench (no projects, no sessions, no run records, a store
keyed by file name): only what the selected cases need is uploaded, each file once, and a second run finds its
files already there (409) and reuses them, saying so; the shape the rig found is in the manifest."""

from __future__ import annotations

import json
from pathlib import Path

from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from tests.adapters.gappy import Gappy, run_gate_on


def test_only_the_selected_cases_papers_are_uploaded_and_a_second_run_reuses_them(gappy: Gappy,
                                                                                  tmp_path: Path) -> None:
    _, manifest = ensure_corpus()
    p32 = Path(manifest.paper("P32").file).name
    first, out = run_gate_on(gappy, tmp_path / "first", cases="2,3")
    assert first.returncode in (0, 1, 2) and "Traceback" not in first.stdout + first.stderr
    assert gappy.uploads == [p32]  # cases 2 and 3 need P32 alone
    shape = json.loads((out / "manifest.json").read_text())["target_shape"]
    assert shape["projects"] is False and shape["sessions"] is False and shape["run_records"] is False
    second, out2 = run_gate_on(gappy, tmp_path / "second", cases="2")
    assert "Traceback" not in second.stdout + second.stderr
    assert gappy.uploads == [p32], "nothing uploaded twice"
    store = EvidenceStore(out2 / "evidence.sqlite3")
    try:
        setup = store.meta("setup")
        reused = [e.data for e in store.evidence(kind="setup")]
    finally:
        store.close()
    assert setup["docs"]["P32"] == "d-1" and reused and "409" in reused[0]["why"]
    entry = setup["ingest"][0]
    assert entry["reused"] and entry["sha256"] == manifest.paper("P32").sha256 and entry["upload_name"] == p32
