"""Percentiles and summaries of measured values (nearest-rank, no interpolation surprises)."""

from __future__ import annotations

import math

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


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of `values`, None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summarize(values: list[float]) -> Summary:
    if not values:
        return Summary(count=0)
    return Summary(count=len(values), p50=percentile(values, 50), p90=percentile(values, 90),
                   p95=percentile(values, 95), p99=percentile(values, 99), min=min(values), max=max(values),
                   mean=sum(values) / len(values))
