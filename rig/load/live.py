"""What a load run has measured so far, in one line, while it runs: runs and their rate, failed tasks of all
attempted (the run's one tally), and T4 p95 — what a CI log shows every few seconds, as Locust's headless mode
prints its stats."""

from __future__ import annotations

from rig.evidence import EvidenceStore
from rig.measure.aggregate import ended_run_ids, run_ends
from rig.measure.tally import tally
from rig.stats import summarize

EVERY_S = 5.0  # how often a running load says how it goes


def so_far(store: EvidenceStore, elapsed_s: float) -> str:
    """`41 runs (2.1/s), failed 0 of 43 tasks, T4 p95 812 ms` from what the store holds now."""
    t8 = store.measures("T8")
    ends = run_ends(t8)
    counted = tally(ends, ended_run_ids(t8), store.measures("error"), store.measures("task"))
    t4 = summarize([m.value for m in store.measures("T4") if m.source == "client"])
    runs = sum(ends.values())
    rate = runs / elapsed_s if elapsed_s > 0 else 0.0
    t4_text = f"T4 p95 {t4.p95:.0f} ms" if t4.count and t4.p95 is not None else "no T4 yet"
    return f"{runs} runs ({rate:.1f}/s), failed {counted.failed} of {counted.attempts} tasks, {t4_text}"
