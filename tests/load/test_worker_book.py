"""The master's book of workers and a worker's ledger: losses, returns, and counts that must agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.load.finish import lost_worker_line
from rig.load.workers import WorkerBook, WorkerLedger, read_ledger, report_counts


def test_losses_and_returns_are_dated_and_saved_as_they_happen() -> None:
    saved: list[list[dict[str, Any]]] = []
    book = WorkerBook(save=saved.append)
    book.report("hostA_1", rows=10, requests=4, failures=1)
    book.report("hostB_2", rows=5, requests=2, failures=0)
    book.observe({"hostA_1": "running", "hostB_2": "running"}, stopping=False)
    heard = book.workers["hostA_1"].last_heard_ms
    book.observe({"hostA_1": "missing", "hostB_2": "running"}, stopping=False)
    a = book.workers["hostA_1"]
    assert a.lost and a.lost_ms is not None and a.silent_since_ms == heard and a.state == "missing"
    assert saved and any(w["worker_id"] == "hostA_1" and w["lost_ms"] for w in saved[-1])
    book.observe({"hostA_1": "running", "hostB_2": "running"}, stopping=False)
    assert a.returned_ms is not None and a.lost  # an outage stays on the record
    book.observe({}, stopping=True)  # both reported they stopped as the run ended
    assert [w.state for w in book.records()] == ["stopped", "stopped"]
    assert not book.workers["hostB_2"].lost
    assert [e.kind for e in a.events] == ["joined", "missing", "returned", "stopped"]
    line = lost_worker_line(a)
    assert "hostA_1 lost at" in line and "back at" in line and "10 rows and 4 requests" in line


def test_a_worker_that_goes_mid_run_has_left() -> None:
    book = WorkerBook()
    book.report("h_1", 1, 1, 0)
    book.observe({"h_1": "running"}, stopping=False)
    book.observe({}, stopping=False)
    assert book.workers["h_1"].state == "left" and book.workers["h_1"].lost


def test_report_counts_leave_t_code_rows_out() -> None:
    data = {"stats": [{"method": "POST", "num_requests": 3, "num_failures": 1},
                      {"method": "T4", "num_requests": 9, "num_failures": 0},
                      {"method": "GET", "num_requests": 2, "num_failures": 0}]}
    assert report_counts(data) == (5, 1)
    assert report_counts({}) == (0, 0)


def test_the_ledger_survives_a_torn_last_line(tmp_path: Path) -> None:
    ledger = WorkerLedger(tmp_path / "w.ledger.jsonl")
    ledger.shipped("h_1", 3, 2, 0)
    ledger.shipped("h_1", 4, 1, 0)
    with ledger.path.open("a") as out:
        out.write('{"worker_id": "h_1", "seq"')  # killed while writing
    lines = read_ledger(ledger.path)
    assert [x.seq for x in lines] == [1, 2] and sum(x.rows for x in lines) == 7
