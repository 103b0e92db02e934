"""The machine a load ran on, as the soak judges its slopes: a rise in what *other* programs took from the cores moves
a target's timings and the slots it holds the way a leak would.

The master samples the machine each second (`machine_busy_cores`, `machine_steal_cores`: cores' worth of CPU in use
and taken by the hypervisor, from the kernel's counters). The others' share is that less the rig's own Locust
processes (`client_cpu`) and, for a target on this machine, the target's own CPU (`target_cpu`). Over a soak's hold
the environment is **steady** unless the others rose by `SHIFT_CORES` from the hold's first third to its last; a
drift on a series the environment moves (timings, slots held) is then unclear — the rig cannot tell the target's
drift from the machine's — and the run undecided, saying so. A machine busy all along is steady: it makes each
sample noisier (the slope's interval wider), not the later ones slower.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from rig.evidence import EvidenceStore
from rig.measure.events import Measure
from rig.results.soak import Environment

SHIFT_CORES = 0.3  # how far the others' load may rise over the hold and still be a steady machine
MOVED_BY_MACHINE = ("soak.T4_ms_per_h", "soak.T5_ms_per_h", "soak.T4_ms_per_turn", "soak.slots_per_h")


class MachineSampler:
    """Cores' worth of CPU in use, and stolen, since the previous sample (psutil's counters for the whole machine)."""

    def __init__(self) -> None:
        import psutil

        self._psutil = psutil
        self.cores = psutil.cpu_count() or 1
        self._last = psutil.cpu_times()

    def sample(self, elapsed_s: float) -> tuple[float, float]:
        """(busy cores, stolen cores) over the last `elapsed_s` seconds."""
        now = self._psutil.cpu_times()
        last, self._last = self._last, now
        if elapsed_s <= 0:
            return 0.0, 0.0
        idle = (now.idle - last.idle) + (getattr(now, "iowait", 0.0) - getattr(last, "iowait", 0.0))
        steal = getattr(now, "steal", 0.0) - getattr(last, "steal", 0.0)
        total = sum(now) - sum(last)
        busy = max(0.0, total - idle - steal)
        return busy / elapsed_s, max(0.0, steal) / elapsed_s


def is_local(url: str) -> bool:
    """Whether a target at `url` runs on this machine (its CPU is then part of the machine's)."""
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def environment_during(store: EvidenceStore, measures: list[Measure], start_ms: float, end_ms: float, *,
                       target_local: bool) -> Environment:
    """The machine over [start, end): the others' load in the first and last thirds, and whether it was steady."""
    held = {name: [(p.ts_ms, p.value) for p in store.series(name) if start_ms <= p.ts_ms < end_ms]
            for name in ("machine_busy_cores", "machine_steal_cores", "target_cpu")}  # each series read once
    cpu = [m for m in measures if m.code == "client_cpu" and m.ts_ms is not None and start_ms <= m.ts_ms < end_ms]

    def mean(name: str, lo: float, hi: float) -> float | None:
        pts = [v for t, v in held[name] if lo <= t < hi]
        return sum(pts) / len(pts) if pts else None

    def client(lo: float, hi: float) -> float:
        by_process: dict[str, list[float]] = {}
        for m in cpu:
            if lo <= (m.ts_ms or 0.0) < hi:
                by_process.setdefault(m.origin or "local", []).append(m.value)
        return sum(sum(v) / len(v) for v in by_process.values()) / 100.0

    def others(lo: float, hi: float) -> float | None:
        busy = mean("machine_busy_cores", lo, hi)
        if busy is None:
            return None
        target = (mean("target_cpu", lo, hi) or 0.0) if target_local else 0.0
        return max(0.0, busy - client(lo, hi) - target)

    cores = next((int(p.value) for p in store.series("machine_cores")), None)
    third = (end_ms - start_ms) / 3
    out = Environment(cores=cores, others_first=_round(others(start_ms, start_ms + third)),
                      others_last=_round(others(end_ms - third, end_ms)))
    busy, steal = mean("machine_busy_cores", start_ms, end_ms), mean("machine_steal_cores", start_ms, end_ms)
    if busy is not None and cores:
        out.in_use_share = round((busy + (steal or 0.0)) / cores, 3)
    if out.others_first is not None and out.others_last is not None and \
            out.others_last - out.others_first >= SHIFT_CORES:
        out.steady = False
        out.why = (f"other programs' load on this machine rose from {out.others_first:.2f} to {out.others_last:.2f} "
                   "cores over the hold")
    return out


def _round(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None
