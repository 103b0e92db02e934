"""A target that answers outside its adapter's rules: the gap is the target's, never a traceback of the rig's.

Small in-process targets described in rig.yaml alone (no projects, no sessions, no run records) answer a wrong
shape, an unknown status word, or an error body in each common shape. During setup the gate ends exit 2 naming
the cause, every selected case NOT_RUN with the reason, the exchange in the evidence store; inside a case the
item decides by the verdict rule. No traceback ever reaches the console.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rig.adapters.error_body import read_error_body
from rig.evidence import EvidenceStore
from tests.adapters.gappy import ERROR_BODIES, Gappy, run_gate_on


@pytest.mark.parametrize("shape", sorted(ERROR_BODIES))
def test_an_error_body_is_read_in_each_common_shape(shape: str) -> None:
    body, ctype, expected = ERROR_BODIES[shape]
    read = read_error_body(body, ctype)
    assert read.message is not None and expected in read.message, (shape, read)
    if shape == "protocol_v1":
        assert read.code == "bad_login"
    if shape == "problem_json":
        assert read.code == "login"


def _setup_failed(done: subprocess.CompletedProcess[str], out: Path, cause: str) -> dict[str, Any]:
    """Exit 2 naming `cause`, no traceback, every case NOT_RUN, the junit error case, the exchange stored."""
    console = done.stdout + done.stderr
    assert done.returncode == 2, console
    assert "Traceback" not in console, console
    assert cause in " ".join(console.split()), console
    results = json.loads((out / "results.json").read_text())
    assert results["cases"] and all(c["verdict"] == "NOT_RUN" and cause in c["reason"] for c in results["cases"])
    assert "<error" in (out / "junit.xml").read_text()
    store = EvidenceStore(out / "evidence.sqlite3")
    try:
        errors = [e.data for e in store.evidence(kind="setup_error")]
    finally:
        store.close()
    assert errors and cause in errors[0]["error"]
    return errors[0]


def test_an_upload_answer_without_a_document_id_ends_setup_exit_2_with_the_exchange(gappy: Gappy,
                                                                                    tmp_path: Path) -> None:
    gappy.faults["upload_answer"] = {"ok": True}  # no id anywhere
    done, out = run_gate_on(gappy, tmp_path)
    error = _setup_failed(done, out, "upload: the answer names no document id")
    assert error["operation"] == "upload" and '"ok": true' in error["exchange"]["response"]


def test_a_resume_after_a_failed_setup_runs_the_cases_it_could_not(gappy: Gappy, tmp_path: Path) -> None:
    gappy.faults["upload_answer"] = {"ok": True}
    first, out = run_gate_on(gappy, tmp_path)
    assert first.returncode == 2
    del gappy.faults["upload_answer"]  # the target fixed: NOT_RUN never ran, so the resume runs it
    again, _ = run_gate_on(gappy, tmp_path, resume=True)
    results = json.loads((out / "results.json").read_text())
    assert [c["verdict"] for c in results["cases"]] != ["NOT_RUN"], again.stdout + again.stderr
    assert "Traceback" not in again.stdout + again.stderr


def test_an_unknown_status_word_ends_setup_exit_2_naming_the_field(gappy: Gappy, tmp_path: Path) -> None:
    gappy.faults["status_word"] = "indexing-ish"  # not in the values map: no status of the rig's
    done, out = run_gate_on(gappy, tmp_path)
    error = _setup_failed(done, out, "documents: the answer does not fit the rig's Document: status")
    assert "indexing-ish" in error["error"] and "indexing-ish" in error["exchange"]["response"]


@pytest.mark.parametrize("shape", ["fastapi", "problem_json", "plain_text"])
def test_a_refused_login_names_the_targets_own_words(gappy: Gappy, tmp_path: Path, shape: str) -> None:
    gappy.faults["login_error"] = shape
    done, out = run_gate_on(gappy, tmp_path)
    _setup_failed(done, out, "login of account a (ann) refused: 401")
    assert ERROR_BODIES[shape][2] in " ".join((done.stdout + done.stderr).split())


def test_a_wrong_shape_inside_a_case_is_that_cases_fail_with_the_exchange(gappy: Gappy, tmp_path: Path) -> None:
    gappy.faults["document_shape"] = {"unexpected": ["shape"]}  # a document read answered with something else
    done, out = run_gate_on(gappy, tmp_path, cases="3")
    console = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in console, console
    results = json.loads((out / "results.json").read_text())
    case = results["cases"][0]
    assert case["verdict"] == "FAIL"
    target = [i for i in case["items"] if i["name"] == "target"]
    assert target and "protocol violation: document" in target[0]["reason"]
    store = EvidenceStore(out / "evidence.sqlite3")
    try:
        exchanges = [e.data for e in store.evidence(1, 3, kind="exchange")]
    finally:
        store.close()
    assert exchanges and exchanges[0]["exchange"]["operation"] == "document"
    assert "unexpected" in exchanges[0]["exchange"]["response"]
