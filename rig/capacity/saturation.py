"""What saturates first: the target's own gauges and, for a local target, its process, sampled each second.

From the target's `/metrics` (through its adapter): the run-slot gauge it declares (`slots_metric`, its limit the
`…_total` gauge beside it) and any `…_queue_depth` gauge (a queue that forms means what is in front of it is full).
For a target the rig started: its process's CPU (at its limit at 90 % of one core: one event loop), resident
memory, open files, threads and connections (psutil). Each step reads the peak of each, and when it first reached
its limit.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from rig.adapters.base import Adapter
from rig.errors import CapabilityMissing, RigError
from rig.results.capacity import ResourceReading

CPU_LIMIT_PCT = 90.0
SAMPLE_EVERY_S = 1.0


class SaturationSampler:
    """A thread sampling the target until `stop()`; `reading(start_ms, end_ms)` per step."""

    def __init__(self, adapter: Adapter, *, slots_metric: str | None, pid: int | None) -> None:
        self.adapter = adapter
        self.slots_metric = slots_metric
        self.pid = pid
        self.points: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.limits: dict[str, float] = {}
        self.sources: dict[str, str] = {}
        self.units: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rig-saturation", daemon=True)
        self._metrics = True

    def start(self) -> SaturationSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _put(self, name: str, value: float, source: str, unit: str = "", limit: float | None = None) -> None:
        self.points[name].append((time.time() * 1000, value))
        self.sources[name], self.units[name] = source, unit
        if limit is not None:
            self.limits[name] = limit

    def _loop(self) -> None:
        proc = None
        if self.pid is not None:
            import psutil

            try:
                proc = psutil.Process(self.pid)
                proc.cpu_percent(None)
            except psutil.Error:
                proc = None
        while not self._stop.wait(SAMPLE_EVERY_S):
            if self._metrics:
                self._sample_metrics()
            if proc is not None:
                proc = self._sample_process(proc)

    def _sample_metrics(self) -> None:
        try:
            text = self.adapter.metrics_text()
        except CapabilityMissing:
            self._metrics = False
            return
        except RigError:
            return
        values: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if not s.labels:
                    values[s.name] = float(s.value)
        if self.slots_metric and self.slots_metric in values:
            total = values.get(self.slots_metric.replace("_in_use", "_total"))
            self._put("run slots", values[self.slots_metric], "target /metrics", "slots", total)
        for name, value in values.items():
            if name.endswith("_queue_depth"):
                self._put(f"queue {name.removesuffix('_queue_depth')}", value, "target /metrics", "waiting", 0.0)

    def _sample_process(self, proc: Any) -> Any | None:
        """One reading of the target's process (a `psutil.Process`); None once it is gone."""
        import psutil

        try:
            with proc.oneshot():
                self._put("target CPU", proc.cpu_percent(None), "process", "% of a core", CPU_LIMIT_PCT)
                self._put("target memory", proc.memory_info().rss / 2**20, "process", "MiB")
                self._put("target open files", float(proc.num_fds()), "process", "fds")
                self._put("target threads", float(proc.num_threads()), "process", "threads")
                self._put("target connections", float(len(proc.net_connections(kind="inet"))), "process", "sockets")
        except psutil.Error:
            return None
        return proc

    def reading(self, start_ms: float, end_ms: float) -> list[ResourceReading]:
        """Each resource's peak in [start, end) and the first moment it reached its limit (a queue: any waiting)."""
        out = []
        for name, pts in sorted(self.points.items()):
            mine = [(t, v) for t, v in pts if start_ms <= t < end_ms]
            if not mine:
                continue
            limit = self.limits.get(name)
            full = [t for t, v in mine if limit is not None and (v > limit if limit == 0 else v >= limit)]
            out.append(ResourceReading(name=name, source=self.sources[name], peak=max(v for _, v in mine),
                                       limit=limit, unit=self.units[name], at_limit=bool(full),
                                       first_at_limit_ms=min(full) if full else None))
        return out
