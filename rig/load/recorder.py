"""The recorder of a process that measures: it keeps rows, ships them or merges them, and stores them.

In a distributed load run every worker records into its own recorder, which ships the rows to the
master with each stats report; the master (or a single local process) merges them into the Prometheus
metrics and writes them to the run's evidence store, so one endpoint and one store hold every worker's rows.
"""

from __future__ import annotations

import time
from typing import Any

from rig.evidence import EvidenceStore
from rig.measure.events import Measure
from rig.measure.prometheus import RigMetrics

STORE_FLUSH_EVERY_S = 1.0
_FIELDS = ("code", "source", "value", "unit", "run_id", "label", "scenario", "ts_ms")


def pack(m: Measure) -> list[Any]:
    """A row as a plain list (what travels from a worker to the master)."""
    return [getattr(m, f) for f in _FIELDS]


def unpack(row: list[Any], origin: str) -> Measure:
    return Measure(origin=origin, **dict(zip(_FIELDS, row, strict=True)))


class Recorder:
    """One per process: `record()` from the users; `ingest()` on the process that aggregates."""

    def __init__(self) -> None:
        self.metrics = RigMetrics()
        self.aggregating = True
        self.origin = "local"
        self.outbox: list[Measure] = []  # to ship to the master (workers)
        self.to_store: list[Measure] = []  # to write to the evidence store (master or local)
        self.store: EvidenceStore | None = None
        self.counts: dict[str, int] = {}
        self._last_flush = time.monotonic()

    def record(self, measures: list[Measure]) -> None:
        """Rows measured in this process, stamped with the wall time now when they carry none."""
        now = time.time() * 1000
        for m in measures:
            if m.ts_ms is None:
                m.ts_ms = now
        if self.aggregating:
            self.ingest(measures, self.origin)
        else:
            self.outbox.extend(measures)

    def ingest(self, measures: list[Measure], origin: str) -> None:
        for m in measures:
            m.origin = origin
            self.metrics.observe(m)
        self.to_store.extend(measures)
        self.counts[origin] = self.counts.get(origin, 0) + len(measures)
        if time.monotonic() - self._last_flush >= STORE_FLUSH_EVERY_S:
            self.flush()

    def drain_outbox(self) -> list[list[Any]]:
        out, self.outbox = [pack(m) for m in self.outbox], []
        return out

    def flush(self) -> None:
        """Write what has arrived to the evidence store (the only writer of load rows)."""
        self._last_flush = time.monotonic()
        batch, self.to_store = self.to_store, []
        if self.store is not None and batch:
            self.store.add_measures(batch)
