"""Measurements of a load run: Locust stats rows, Prometheus metrics merged on the master, the evidence store.

Every process records samples. A worker ships its samples to the master with each stats report
(Locust's `report_to_master` / `worker_report` events); the master (or a single local process) turns
them into `rig_t_seconds{code,scenario,source}` and the token, cost and run counters, and writes them
to the run's evidence store, so the master's endpoint shows every worker's measurements merged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
STORE_FLUSH_EVERY_S = 1.0


@dataclass(frozen=True)
class Sample:
    code: str
    scenario: str
    source: str
    value: float
    unit: str = "ms"
    run_id: str | None = None
    label: str | None = None
    ts_ms: float = 0.0

    def pack(self) -> list[Any]:
        return [self.code, self.scenario, self.source, self.value, self.unit, self.run_id, self.label, self.ts_ms]

    @classmethod
    def unpack(cls, row: list[Any]) -> Sample:
        return cls(*row)


class RigMetrics:
    """The rig's Prometheus metrics (names from the design), on their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.t_seconds = Histogram("rig_t_seconds", "T-code timings", ["code", "scenario", "source"], registry=r,
                                   buckets=BUCKETS)
        self.send_lag = Histogram("rig_send_lag_seconds", "Scheduled → actual send (open-loop arrivals)",
                                  ["scenario"], registry=r, buckets=BUCKETS)
        self.tokens = Counter("rig_tokens", "Tokens of completed runs", ["direction", "kind"], registry=r)
        self.cost = Counter("rig_cost_usd", "Cost of runs (actual only where a provider reported it)", ["kind"],
                            registry=r)
        self.runs = Counter("rig_runs", "Runs ended, by state and reason", ["state", "reason"], registry=r)
        self.errors = Counter("rig_errors", "Requests and runs that failed, by reason", ["reason"], registry=r)
        self.users = Gauge("rig_users", "Simulated users running", registry=r)
        self.workers = Gauge("rig_workers", "Locust workers connected", registry=r)
        self.target_cpu = Gauge("rig_target_cpu_ratio", "Target CPU use (cores busy), sampled", registry=r)
        self.target_rss = Gauge("rig_target_memory_bytes", "Target resident memory, sampled", registry=r)

    def ingest(self, s: Sample) -> None:
        if s.unit == "ms" and s.code.startswith("T"):
            self.t_seconds.labels(s.code, s.scenario, s.source).observe(s.value / 1000.0)
        elif s.code == "send_lag":
            self.send_lag.labels(s.scenario).observe(s.value / 1000.0)
        elif s.code == "T8":
            state, _, reason = (s.label or "unknown/unknown").partition("/")
            self.runs.labels(state, reason).inc(s.value)
        elif s.code == "T12" and s.unit == "tokens":
            self.tokens.labels(s.label or "unknown", s.source).inc(s.value)
        elif s.code == "T13" and s.unit == "usd":
            self.cost.labels("actual" if s.source == "actual" else "estimated").inc(s.value)
        elif s.code == "error":
            self.errors.labels(s.label or "unknown").inc(s.value)


class Recorder:
    """One per process: collects samples; the aggregating process also merges and stores them."""

    def __init__(self) -> None:
        self.metrics = RigMetrics()
        self.aggregating = True
        self.origin = "local"
        self.outbox: list[Sample] = []  # to ship to the master (workers)
        self.to_store: list[tuple[str, Sample]] = []  # to write to the evidence store (master/local)
        self.store: Any = None
        self.counts: dict[str, int] = {}
        self._last_flush = time.monotonic()

    def record(self, samples: list[Sample]) -> None:
        if self.aggregating:
            self.ingest(samples, self.origin)
        else:
            self.outbox.extend(samples)

    def ingest(self, samples: list[Sample], origin: str) -> None:
        for s in samples:
            self.metrics.ingest(s)
        self.to_store.extend((origin, s) for s in samples)
        self.counts[origin] = self.counts.get(origin, 0) + len(samples)
        if time.monotonic() - self._last_flush >= STORE_FLUSH_EVERY_S:
            self.flush()

    def drain_outbox(self) -> list[list[Any]]:
        out, self.outbox = [s.pack() for s in self.outbox], []
        return out

    def flush(self) -> None:
        """Write what has arrived to the evidence store (the master's only writer)."""
        self._last_flush = time.monotonic()
        if self.store is None:
            self.to_store.clear()  # no store configured: the metrics endpoint is the only output
            return
        if not self.to_store:
            return
        from rig.evidence import Measure

        batch, self.to_store = self.to_store, []
        self.store.add_measures([Measure(code=s.code, source=s.source, value=s.value, unit=s.unit, run_id=s.run_id,
                                         label=s.label, scenario=s.scenario, ts_ms=s.ts_ms, origin=origin)
                                 for origin, s in batch])


RECORDER = Recorder()
