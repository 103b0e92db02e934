"""The rig's one percentile and the summaries built on it.

Method: nearest rank — the q-th percentile of n values is the value at rank ceil(q/100 · n) of the sorted values
(at least rank 1). It is always a value that was measured (no interpolation), so a p50 of two values is the
smaller one, and a p99 of fewer than 100 values is their maximum. Every report, threshold, comparison and browser
summary uses it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel


class Summary(BaseModel):
    count: int
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of `values`, None when empty."""
    if not values:
        return None
    return nearest_rank(sorted(values), q)


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank percentile of values already sorted (for loops that sort once, such as a bootstrap)."""
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        return Summary(count=0)
    return Summary(count=len(values), p50=percentile(values, 50), p90=percentile(values, 90),
                   p95=percentile(values, 95), p99=percentile(values, 99), min=min(values), max=max(values),
                   mean=sum(values) / len(values))
