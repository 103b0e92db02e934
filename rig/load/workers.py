"""The master's account of its workers: when each joined, what it sent, when it was lost or came back.

Locust marks a worker `missing` when its heartbeats stop for about three seconds and goes on with the
rest. The book records, per worker, every report the master merged (rig rows and HTTP requests), the
last time the master heard from it, and each loss and return as the master observed them. It is written
to the evidence store (meta `workers`) whenever it changes, so a master that dies keeps what it knew;
`load.json` carries it as `worker_nodes`.

Each worker keeps its own ledger of what it shipped (`RIG_WORKER_LEDGER`, a JSON line per report), so
the two sides can be compared: what the master counted from a worker must be the sum of the first k
reports of that worker's ledger — a report is counted once or, when it never arrived, not at all.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rig.jsonvalue import ForeignJson
from rig.load.locust_rows import is_measure_row
from rig.results.load import EventKind, WorkerEvent, WorkerRecord

LEDGER_ENV = "RIG_WORKER_LEDGER"


def _now_ms() -> float:
    return time.time() * 1000


def report_counts(data: ForeignJson) -> tuple[int, int]:
    """HTTP requests and failures in one worker report (Locust's entries minus the T-code rows)."""
    requests = failures = 0
    for entry in data.get("stats") or []:
        if not is_measure_row(str(entry.get("method") or "")):
            requests += int(entry.get("num_requests") or 0)
            failures += int(entry.get("num_failures") or 0)
    return requests, failures


class WorkerBook:
    """Kept by the master: `report()` per merged report, `heard()` per heartbeat, `observe()` each second."""

    def __init__(self, save: Any = None) -> None:
        self.workers: dict[str, WorkerRecord] = {}
        self._save = save  # called with the records whenever something changed
        self._dirty = False

    def bind(self, save: Any) -> None:
        """Save the records through `save` from now on (the process's store, once it has one)."""
        self._save = save

    def _get(self, worker_id: str) -> WorkerRecord:
        if worker_id not in self.workers:
            now = _now_ms()
            self.workers[worker_id] = WorkerRecord(worker_id=worker_id, host=worker_id.rsplit("_", 1)[0],
                                                   joined_ms=now, events=[WorkerEvent(at_ms=now, kind="joined")])
            self._dirty = True
        return self.workers[worker_id]

    def report(self, worker_id: str, rows: int, requests: int, failures: int) -> None:
        """A report the master merged."""
        w, now = self._get(worker_id), _now_ms()
        w.reports += 1
        w.rows += rows
        w.requests += requests
        w.failures += failures
        w.first_report_ms = w.first_report_ms or now
        w.last_report_ms = w.last_heard_ms = now
        self._dirty = True

    def heard(self, worker_id: str) -> None:
        self._get(worker_id).last_heard_ms = _now_ms()

    def observe(self, states: dict[str, str], stopping: bool) -> None:
        """The workers the master knows now and their Locust states; one that vanished has stopped (when the
        run is stopping) or left."""
        now = _now_ms()
        for worker_id, state in states.items():
            w = self._get(worker_id)
            if state == "missing" and w.state != "missing":
                if w.lost_ms is None:
                    w.lost_ms, w.silent_since_ms = now, w.last_heard_ms
                w.events.append(WorkerEvent(at_ms=now, kind="missing", detail="heartbeats stopped"))
                self._dirty = True
            elif state != "missing" and w.state == "missing":
                w.returned_ms = now
                w.events.append(WorkerEvent(at_ms=now, kind="returned", detail=f"heard again ({state})"))
                self._dirty = True
            w.state = state
        for worker_id, w in self.workers.items():
            if worker_id not in states and w.state not in ("stopped", "left"):
                kind: EventKind = "stopped" if stopping and w.state != "missing" else "left"
                w.state = kind
                w.events.append(WorkerEvent(at_ms=now, kind=kind))
                self._dirty = True
        self.save()

    def save(self, force: bool = False) -> None:
        if (self._dirty or force) and self._save is not None:
            self._save([w.model_dump(mode="json") for w in self.workers.values()])
        self._dirty = False

    def records(self) -> list[WorkerRecord]:
        return list(self.workers.values())


class LedgerLine(BaseModel):
    """One report a worker shipped, in its own words: what it sent, for the master's count to be held against."""

    worker_id: str
    seq: int
    at_ms: float
    rows: int
    requests: int
    failures: int


class WorkerLedger:
    """A worker's own account of each report it shipped: a JSON line per report, flushed as it goes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seq = 0

    @classmethod
    def from_env(cls) -> WorkerLedger | None:
        raw = os.environ.get(LEDGER_ENV)
        return cls(Path(raw)) if raw else None

    def shipped(self, worker_id: str, rows: int, requests: int, failures: int) -> None:
        self.seq += 1
        line = LedgerLine(worker_id=worker_id, seq=self.seq, at_ms=_now_ms(), rows=rows, requests=requests,
                          failures=failures)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line.model_dump_json() + "\n")


def read_ledger(path: Path) -> list[LedgerLine]:
    """A worker ledger's lines (a torn last line, from a worker killed while writing, is left out)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(LedgerLine.model_validate_json(line))
        except ValueError:
            continue
    return out
