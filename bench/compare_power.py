"""How sensitive and how quiet `rig compare` is: its false-alarm rate, and the smallest T4 shift it detects with
90 % power, at 20, 100 and 500 samples per run.

    python bench/compare_power.py [--seconds 20] [--trials 100] [--resamples 500] [--run DIR]

The population is real: the client T4 samples of one `rig load` run on the embedded workbench made in this
invocation (or `--run DIR`, an earlier load run). Each trial draws a base and a new sample of n values from it
(with replacement); for the false-alarm rate nothing is added, for power a fixed shift is added to every new
value. A trial counts when `rig compare`'s own rule (`rig.compare.stats.call_shift`, α = 0.05, minimum effect
max(10 % of the base, 50 ms)) calls the p50 or p95 "regressed" or "improved". The printed ratio is the smallest
detected shift ÷ the population's median T4 (what fraction of a typical first-answer time it takes to be seen).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from rig.compare.runs import read_measures, samples
from rig.compare.stats import call_shift
from rig.stats import percentile

SIZES = (20, 100, 500)
SHIFTS_MS = (10, 25, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1200, 1600)


def population(run: Path | None, seconds: int) -> list[float]:
    if run is None:
        from rig.load.options import LoadOptions
        from rig.load.session import run_load

        out = Path(tempfile.mkdtemp(prefix="rig-bench-compare-")) / "load"
        run = run_load(LoadOptions(users=6, spawn_rate=6, duration_s=seconds, out=out, think_min_s=0.05,
                                   think_max_s=0.2, fetch_detail=False)).run_dir
    values = samples(read_measures(run))[("T4", "client")]
    if len(values) < 50:
        raise SystemExit(f"only {len(values)} T4 samples in {run}: run longer (--seconds)")
    return values


def flagged(base: list[float], new: list[float], stats: tuple[str, ...], resamples: int, seed: int) -> bool:
    return any(call_shift(s, base, new, alpha=0.05, min_rel=0.10, min_abs=50.0, resamples=resamples,
                          seed=seed).call in ("regressed", "improved") for s in stats)


def rate(pop: list[float], n: int, shift: float, trials: int, resamples: int, stats: tuple[str, ...]) -> float:
    rng = random.Random(n * 7919 + int(shift))
    hits = 0
    for t in range(trials):
        base = rng.choices(pop, k=n)
        new = [v + shift for v in rng.choices(pop, k=n)]
        hits += flagged(base, new, stats, resamples, seed=t)
    return hits / trials


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--run", type=Path, default=None)
    args = ap.parse_args()
    pop = population(args.run, args.seconds)
    median = percentile(pop, 50) or 1.0
    print(f"population: {len(pop)} client T4 samples, median {median:.1f} ms, p95 {percentile(pop, 95):.1f} ms")
    print(f"{'n':>5} {'stat':>8} {'false alarms':>13} {'smallest shift @90%':>20} {'÷ median T4':>12} {'s':>6}")
    for n in SIZES:
        stats = ("p50",) if n < 20 else ("p50", "p95")
        for label, which in (("p50", ("p50",)), ("p50+p95", stats)):
            began = time.monotonic()
            alarms = rate(pop, n, 0.0, args.trials, args.resamples, which)
            smallest = next((s for s in SHIFTS_MS if rate(pop, n, s, args.trials, args.resamples, which) >= 0.9),
                            None)
            shown = f"{smallest} ms" if smallest is not None else f"> {SHIFTS_MS[-1]} ms"
            ratio = f"{smallest / median:.2f}" if smallest is not None else "—"
            print(f"{n:>5} {label:>8} {alarms:>13.1%} {shown:>20} {ratio:>12} {time.monotonic() - began:>6.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
