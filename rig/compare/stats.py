"""Statistics for comparing two runs: a seeded bootstrap interval for a percentile shift, Cliff's delta, and a
two-proportion test — small, dependency-free and deterministic for a given seed."""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from rig.stats import nearest_rank, percentile

Call = Literal["regressed", "improved", "no evidence", "not enough samples"]

# The fewest samples per side for a percentile to be compared at all (a p99 of 20 values is its maximum).
MIN_SAMPLES: dict[float, int] = {50: 10, 90: 20, 95: 20, 99: 100}


class Shift(BaseModel):
    """How one percentile moved from the base run to the new one, and what the rig concludes."""

    stat: str  # "p50", "p95", "p99", "mean"
    base: float | None
    new: float | None
    delta: float | None = None  # new − base
    low: float | None = None  # the (1 − α) bootstrap interval of delta
    high: float | None = None
    relative: float | None = None  # delta ÷ base
    call: Call = "not enough samples"
    why: str = ""


def bootstrap_shifts(base: Sequence[float], new: Sequence[float], qs: Sequence[float], *, alpha: float = 0.05,
                     resamples: int = 1000, seed: int = 0) -> list[tuple[float, float, float]]:
    """(delta, low, high) of each percentile q: the observed shift and its percentile-bootstrap interval,
    resampling each run independently (one seeded generator, so a comparison is reproducible)."""
    rng = random.Random(seed)
    observed = [_q(new, q) - _q(base, q) for q in qs]
    draws: list[list[float]] = [[] for _ in qs]
    for _ in range(resamples):
        b = sorted(rng.choices(base, k=len(base)))
        n = sorted(rng.choices(new, k=len(new)))
        for i, q in enumerate(qs):
            draws[i].append(nearest_rank(n, q) - nearest_rank(b, q))
    out = []
    for i, delta in enumerate(observed):
        d = sorted(draws[i])
        out.append((delta, nearest_rank(d, 100 * alpha / 2), nearest_rank(d, 100 * (1 - alpha / 2))))
    return out


def cliffs_delta(base: Sequence[float], new: Sequence[float]) -> float:
    """P(new > base) − P(new < base) over all pairs: −1 … 1, 0 for no difference (rank-based effect size)."""
    if not base or not new:
        return 0.0
    ordered = sorted(base)
    more = sum(bisect_left(ordered, x) for x in new)
    less = sum(len(ordered) - bisect_right(ordered, x) for x in new)
    return (more - less) / (len(base) * len(new))


def two_proportions(x1: int, n1: int, x2: int, n2: int) -> float | None:
    """Two-sided p-value of a pooled two-proportion z test (None when either side has no trials)."""
    if n1 == 0 or n2 == 0:
        return None
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (x2 / n2 - x1 / n1) / se
    return math.erfc(abs(z) / math.sqrt(2))


def call_shift(stat: str, base: Sequence[float], new: Sequence[float], *, alpha: float, min_rel: float,
               min_abs: float, higher_is_worse: bool = True, resamples: int = 1000, seed: int = 0) -> Shift:
    """One percentile's verdict: regressed / improved only when the interval excludes zero *and* the shift is at
    least the minimum effect that matters (max of `min_rel` × base and `min_abs`); too few samples say so."""
    q = float(stat[1:]) if stat.startswith("p") else 50.0
    need = MIN_SAMPLES.get(q, 20)
    b_val, n_val = (percentile(list(base), q) if base else None), (percentile(list(new), q) if new else None)
    shift = Shift(stat=stat, base=b_val, new=n_val)
    if len(base) < need or len(new) < need:
        shift.why = f"{len(base)} vs {len(new)} samples; {stat} needs at least {need} on each side"
        return shift
    (delta, low, high), = bootstrap_shifts(base, new, [q], alpha=alpha, resamples=resamples, seed=seed)
    assert b_val is not None
    effect = max(min_rel * abs(b_val), min_abs)
    shift.delta, shift.low, shift.high = delta, low, high
    shift.relative = delta / b_val if b_val else None
    worse = delta if higher_is_worse else -delta
    if low > 0 or high < 0:
        if abs(delta) >= effect:
            shift.call = "regressed" if worse > 0 else "improved"
            shift.why = f"interval [{low:.1f}, {high:.1f}] excludes 0 and |shift| {abs(delta):.1f} ≥ {effect:.1f}"
        else:
            shift.call = "no evidence"
            shift.why = f"a real but small shift: |{delta:.1f}| < the minimum effect {effect:.1f}"
    else:
        shift.call = "no evidence"
        shift.why = f"interval [{low:.1f}, {high:.1f}] includes 0"
    return shift


def _q(values: Sequence[float], q: float) -> float:
    return nearest_rank(sorted(values), q)


def percentile_interval(values: Sequence[float], q: float, *, alpha: float = 0.10, resamples: int = 1000,
                        seed: int = 0) -> tuple[float, float, float] | None:
    """(observed, low, high): percentile `q` of one sample and its (1 − α) percentile-bootstrap interval (None with
    no values). Seeded, so a judgement is reproducible."""
    if not values:
        return None
    rng = random.Random(seed)
    ordered = sorted(values)
    draws = sorted(nearest_rank(sorted(rng.choices(ordered, k=len(ordered))), q) for _ in range(resamples))
    return nearest_rank(ordered, q), nearest_rank(draws, 100 * alpha / 2), nearest_rank(draws, 100 * (1 - alpha / 2))


def wilson_interval(failures: int, trials: int, *, alpha: float = 0.10) -> tuple[float, float, float] | None:
    """(ratio, low, high): a proportion and its Wilson score interval (None with no trials)."""
    if trials <= 0:
        return None
    z = {0.10: 1.6449, 0.05: 1.96, 0.01: 2.5758}.get(alpha, 1.6449)
    p = failures / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return p, max(0.0, centre - half), min(1.0, centre + half)
