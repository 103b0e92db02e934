"""The evidence store: one SQLite file per run directory, written as each step happens.

Everything is redacted on the way in and committed at once, so a killed rig loses nothing it already
measured and `--resume` can continue from the cases that finished. Reports are rendered from here. A case's
start and end and each item fire their `rig.events` hooks once they are stored.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rig import events
from rig.errors import EvidenceError
from rig.jsonvalue import JsonObject
from rig.measure.events import Measure
from rig.redact import Redactor
from rig.verdict import Item, Verdict

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases(rep INTEGER NOT NULL, case_id INTEGER NOT NULL, record_id TEXT NOT NULL,
  module TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL, verdict TEXT, reason TEXT,
  started_ms REAL, ended_ms REAL, trace_id TEXT, PRIMARY KEY(rep, case_id));
CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, rep INTEGER NOT NULL, case_id INTEGER NOT NULL,
  name TEXT NOT NULL, verdict TEXT NOT NULL, reason TEXT NOT NULL, required INTEGER NOT NULL,
  evidence_ids TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evidence(id INTEGER PRIMARY KEY, rep INTEGER, case_id INTEGER, kind TEXT NOT NULL,
  title TEXT NOT NULL, data TEXT NOT NULL, wall_ms REAL NOT NULL);
CREATE TABLE IF NOT EXISTS measures(id INTEGER PRIMARY KEY, rep INTEGER, case_id INTEGER, code TEXT NOT NULL,
  source TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL, run_id TEXT, label TEXT, scenario TEXT,
  ts_ms REAL, origin TEXT);
CREATE TABLE IF NOT EXISTS series(id INTEGER PRIMARY KEY, name TEXT NOT NULL, ts_ms REAL NOT NULL, value REAL NOT NULL,
  labels TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(run_id TEXT PRIMARY KEY, rep INTEGER, case_id INTEGER, trace_id TEXT,
  state TEXT, end_reason TEXT, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spans(trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT,
  name TEXT NOT NULL, service TEXT, scope TEXT, start_ns INTEGER, end_ns INTEGER, attributes TEXT NOT NULL,
  PRIMARY KEY(trace_id, span_id, scope));
CREATE INDEX IF NOT EXISTS evidence_case ON evidence(rep, case_id);
CREATE INDEX IF NOT EXISTS measures_code ON measures(code);
"""


class CaseRow(BaseModel):
    rep: int
    case_id: int
    record_id: str
    module: str
    name: str
    status: str
    verdict: Verdict | None
    reason: str | None
    started_ms: float | None
    ended_ms: float | None
    trace_id: str | None = None  # the case span's trace (rig and target spans)


class EvidenceRow(BaseModel):
    """One piece of evidence as the store keeps it."""

    id: int
    rep: int | None
    case_id: int | None
    kind: str  # exchange, run, fixture, observation, screenshot … (its `data` is shaped by its kind)
    title: str
    data: JsonObject | list[Any] | str | int | float | bool | None  # what the step kept, redacted, shown unread
    wall_ms: float


class StoredRun(BaseModel):
    """One run of the target as the store keeps it: the record's identity and end, with the record unread."""

    run_id: str
    rep: int | None
    case_id: int | None
    trace_id: str | None
    state: str | None
    end_reason: str | None
    detail: JsonObject  # the run record as the adapter read it (RunDetail's JSON), kept for the report


class StoredSpan(BaseModel):
    """One span the rig received or made, as the store keeps it."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    service: str | None
    scope: str | None
    start_ns: int | None
    end_ns: int | None
    attributes: JsonObject  # the span's attributes as OTLP carried them (values: str, int, float, bool, lists)


class SeriesPoint(BaseModel):
    """One point of a stored time series (epoch ms, value)."""

    name: str
    ts_ms: float
    value: float
    labels: dict[str, str]


class EvidenceStore:
    """Thread-safe writer and reader of one run's evidence."""

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = path
        self.redactor = redactor or Redactor()
        self._lock = threading.RLock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise EvidenceError(f"cannot open the evidence store {path}: {exc}",
                                fix="check the run directory is writable (rig gate --out DIR)") from None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def _json(self, data: Any) -> str:
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json")
        return json.dumps(self.redactor.value(data), ensure_ascii=False, default=str)

    # -- writing --------------------------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, self._json(value)))

    def begin_case(self, rep: int, case_id: int, record_id: str, module: str, name: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM items WHERE rep=? AND case_id=?", (rep, case_id))
            conn.execute("INSERT OR REPLACE INTO cases(rep, case_id, record_id, module, name, status, started_ms) "
                         "VALUES(?,?,?,?,?,'running',?)", (rep, case_id, record_id, module, name, time.time() * 1000))
        events.case_started.fire(case_id=case_id, rep=rep, title=f"{record_id} {name}".strip())

    def add_evidence(self, rep: int | None, case_id: int | None, kind: str, title: str, data: Any) -> int:
        """Store one piece of evidence (redacted); returns its id for items to cite."""
        with self._tx() as conn:
            cur = conn.execute("INSERT INTO evidence(rep, case_id, kind, title, data, wall_ms) VALUES(?,?,?,?,?,?)",
                               (rep, case_id, kind, self.redactor.text(title), self._json(data), time.time() * 1000))
            return int(cur.lastrowid or 0)

    def add_item(self, rep: int, case_id: int, item: Item) -> None:
        with self._tx() as conn:
            conn.execute("INSERT INTO items(rep, case_id, name, verdict, reason, required, evidence_ids) "
                         "VALUES(?,?,?,?,?,?,?)", (rep, case_id, item.name, item.verdict.value,
                                                   self.redactor.text(item.reason), int(item.required),
                                                   json.dumps(item.evidence_ids)))
        if events.item_recorded.has_listeners:  # listeners see what the store keeps: the reason redacted
            events.item_recorded.fire(case_id=case_id, rep=rep,
                                      item=item.model_copy(update={"reason": self.redactor.text(item.reason)}))

    def replace_item(self, rep: int, case_id: int, item: Item) -> None:
        """Judge an item again (same name): its verdict, reason and evidence replaced where it is kept."""
        with self._tx() as conn:
            conn.execute("UPDATE items SET verdict=?, reason=?, required=?, evidence_ids=? WHERE rep=? AND case_id=? "
                         "AND name=?", (item.verdict.value, self.redactor.text(item.reason), int(item.required),
                                        json.dumps(item.evidence_ids), rep, case_id, item.name))

    def add_measures(self, measures: list[Measure]) -> None:
        with self._tx() as conn:
            conn.executemany("INSERT INTO measures(rep, case_id, code, source, value, unit, run_id, label, scenario, "
                             "ts_ms, origin) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                             [(m.rep, m.case_id, m.code, m.source, m.value, m.unit, m.run_id, m.label, m.scenario,
                               m.ts_ms if m.ts_ms is not None else time.time() * 1000, m.origin) for m in measures])

    def add_series(self, name: str, points: list[tuple[float, float]], labels: dict[str, str] | None = None) -> None:
        """Points (epoch ms, value) of a time series, e.g. the target's CPU over a load run."""
        text = json.dumps(labels or {}, sort_keys=True)
        with self._tx() as conn:
            conn.executemany("INSERT INTO series(name, ts_ms, value, labels) VALUES(?,?,?,?)",
                             [(name, ts, v, text) for ts, v in points])

    def series(self, name: str | None = None) -> list[SeriesPoint]:
        with self._lock:
            rows = self._conn.execute("SELECT name, ts_ms, value, labels FROM series WHERE (? IS NULL OR name=?) "
                                      "ORDER BY ts_ms", (name, name)).fetchall()
        return [SeriesPoint(name=r["name"], ts_ms=r["ts_ms"], value=r["value"], labels=json.loads(r["labels"]))
                for r in rows]

    def add_run(self, rep: int | None, case_id: int | None, detail: JsonObject) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO runs(run_id, rep, case_id, trace_id, state, end_reason, detail) "
                         "VALUES(?,?,?,?,?,?,?)", (detail["run_id"], rep, case_id, detail.get("trace_id"),
                                                   detail.get("state"), detail.get("end_reason"), self._json(detail)))

    def add_span(self, trace_id: str, span_id: str, parent: str | None, name: str, service: str, scope: str,
                 start_ns: int, end_ns: int, attributes: JsonObject) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO spans(trace_id, span_id, parent_span_id, name, service, scope, "
                         "start_ns, end_ns, attributes) VALUES(?,?,?,?,?,?,?,?,?)",
                         (trace_id, span_id, parent, name, service, scope, start_ns, end_ns, self._json(attributes)))

    def end_case(self, rep: int, case_id: int, verdict: Verdict, reason: str) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE cases SET status='done', verdict=?, reason=?, ended_ms=? WHERE rep=? AND case_id=?",
                         (verdict.value, self.redactor.text(reason), time.time() * 1000, rep, case_id))
        events.case_ended.fire(case_id=case_id, rep=rep, verdict=verdict, reason=self.redactor.text(reason))

    def set_case_trace(self, rep: int, case_id: int, trace_id: str) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE cases SET trace_id=? WHERE rep=? AND case_id=?", (trace_id, rep, case_id))

    # -- reading --------------------------------------------------------------------------------------------
    def last_activity_ms(self) -> float | None:
        """When the store was last written to (the newest evidence, measure, series point or case end), epoch ms."""
        with self._lock:
            row = self._conn.execute(
                "SELECT MAX(t) FROM (SELECT MAX(wall_ms) AS t FROM evidence UNION ALL SELECT MAX(ts_ms) FROM measures "
                "UNION ALL SELECT MAX(ts_ms) FROM series UNION ALL SELECT MAX(ended_ms) FROM cases)").fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row["value"]) if row else default

    def cases(self, rep: int | None = None) -> list[CaseRow]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM cases WHERE (? IS NULL OR rep=?) ORDER BY rep, case_id",
                                      (rep, rep)).fetchall()
        return [CaseRow.model_validate(dict(r)) for r in rows]

    def done_cases(self) -> set[tuple[int, int]]:
        return {(c.rep, c.case_id) for c in self.cases() if c.status == "done"}

    def items(self, rep: int, case_id: int) -> list[Item]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM items WHERE rep=? AND case_id=? ORDER BY id", (rep, case_id)).fetchall()
        return [Item(name=r["name"], verdict=Verdict(r["verdict"]), reason=r["reason"], required=bool(r["required"]),
                     evidence_ids=json.loads(r["evidence_ids"])) for r in rows]

    def evidence(self, rep: int | None = None, case_id: int | None = None, kind: str | None = None
                 ) -> list[EvidenceRow]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM evidence WHERE (? IS NULL OR rep=?) AND (? IS NULL OR case_id=?) AND (? IS NULL OR kind=?) "
                "ORDER BY id", (rep, rep, case_id, case_id, kind, kind)).fetchall()
        return [EvidenceRow.model_validate({**dict(r), "data": json.loads(r["data"])}) for r in rows]

    def measures(self, code: str | None = None) -> list[Measure]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM measures WHERE (? IS NULL OR code=?) ORDER BY id",
                                      (code, code)).fetchall()
        return [Measure.model_validate(dict(r)) for r in rows]

    def runs(self) -> list[StoredRun]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM runs ORDER BY rowid").fetchall()
        return [StoredRun.model_validate({**dict(r), "detail": json.loads(r["detail"])}) for r in rows]

    def spans(self, trace_id: str | None = None) -> list[StoredSpan]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM spans WHERE (? IS NULL OR trace_id=?) ORDER BY start_ns",
                                      (trace_id, trace_id)).fetchall()
        return [StoredSpan.model_validate({**dict(r), "attributes": json.loads(r["attributes"])}) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
