"""The one threshold grammar: what a policy's thresholds and baseline rules say, and the keys they read.

    T4.p95 < 3s                 a T-code headline statistic (p50 p90 p95 p99 max mean count), in ms, s
    error_rate < 1%             a ratio, in % or as a fraction; error_rate.steady / .in_fault / .recovery
    T4.p95 < 3s at 20 users     the value measured with 20 users (key `T4.p95@20`)
    ITL.p95 < 50ms              an answer's pace: ITL (mean gap between its pieces), TPOT (per output token), as
    tokens_out_per_s > 100      T-codes are read; output tokens per second of the load run
    overload.shed_ratio > 50%   `rig capacity`'s overload step: the share refused (429/503) rather than queued …
    overload.lost_runs == 0     … the runs it submitted that never ended; `recovery_s < 10s`: back within the SLO
    soak.rss_mb_per_h < 100     a soak's slope per hour (rss_mb, fds, slots, T4_ms, T5_ms), or per question of
                                a session (T4_ms_per_turn): FAIL when its whole interval lies past the bound
    T4.p95 <= baseline * 1.10   against a baseline run's value, times a factor …
    T5.p50 <= baseline + 200ms  … or plus a margin
    no new FAIL                 no case or item that was not FAIL in the baseline is FAIL now

Amounts are normalised once (`amount`): times to ms, percentages to fractions. Every observed value is filed under
`key(metric, stat, users)`, so what a threshold reads and what a run measured are named the same way.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from pydantic import BaseModel

from rig.measure.tcodes import is_tcode

OPS: dict[str, Callable[[float, float], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt,
                                                  ">=": operator.ge, "==": operator.eq}
METRICS = ("error_rate", "send_lag", "recovery_s", "throughput", "overload", "soak", "ITL", "TPOT",
           "tokens_out_per_s")  # what a threshold may read besides T-codes
STATS = ("p50", "p90", "p95", "p99", "max", "mean", "count")
_OP = r"(?P<op><=|>=|<|>|==)"
_AMOUNT = r"(?P<value>[0-9.]+)\s*(?P<unit>ms|s|%)?"
_THRESHOLD = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][\w]*)(?:\.(?P<stat>p50|p90|p95|p99|max|mean|count|steady|in_fault|recovery|shed_ratio|lost_runs|rss_mb_per_h|fds_per_h|slots_per_h|T4_ms_per_h|T5_ms_per_h|T4_ms_per_turn))?\s*"
    rf"{_OP}\s*{_AMOUNT}\s*(?:at\s+(?P<at>\d+)\s*users?)?\s*$")
_BASELINE = re.compile(r"^\s*(?P<metric>T\d+\.p\d+|T\d+\.mean|error_rate)\s*(?P<op><=|<|>=|>)\s*baseline\s*"
                       rf"(?:(?P<kind>[*+])\s*{_AMOUNT})?\s*$")


def amount(value: str, unit: str | None) -> float:
    """A threshold's number in the rig's units: seconds to ms, percent to a fraction."""
    number = float(value)
    return number * 1000.0 if unit == "s" else number / 100.0 if unit == "%" else number


def key(metric: str, stat: str | None = None, users: int | None = None) -> str:
    """The name an observed value is filed under: `T4.p95`, `error_rate`, `T4.p95@20`."""
    base = f"{metric}.{stat}" if stat else metric
    return base + (f"@{users}" if users else "")


class Threshold(BaseModel):
    """`T4.p95 < 3s`, `error_rate < 1%`, `error_rate.steady < 1%` (outside the injected fault windows and their
    recovery), `recovery_s.p95 < 10s`, `T4.p95 < 3s at 20 users`."""

    text: str
    metric: str
    stat: str | None = "p95"
    op: str
    value: float
    at_users: int | None = None

    @classmethod
    def parse(cls, text: str) -> Threshold:
        m = _THRESHOLD.match(text)
        if not m:
            raise ValueError(f"threshold {text!r} is not of the form 'T4.p95 < 3s' or 'error_rate < 1%'")
        metric = m.group("metric")
        if not (is_tcode(metric) or metric in METRICS):
            raise ValueError(f"threshold {text!r}: the rig measures no {metric!r} (T1–T13, "
                             f"{', '.join(METRICS)})")
        stat = m.group("stat") or ("p95" if re.fullmatch(r"T\d+|send_lag|ITL|TPOT", metric) else None)
        return cls(text=text, metric=metric, stat=stat, op=m.group("op"), value=amount(m.group("value"), m.group("unit")),
                   at_users=int(m.group("at")) if m.group("at") else None)

    @property
    def key(self) -> str:
        """The observed-value key it reads."""
        return key(self.metric, self.stat, self.at_users)

    def holds(self, observed: float) -> bool:
        return bool(OPS[self.op](observed, self.value))


class ThresholdCheck(BaseModel):
    """One threshold against a run: what it says, what was observed (in `unit`), whether it holds (None: no
    measurement, so it cannot decide)."""

    text: str
    key: str
    observed: float | None
    unit: str
    holds: bool | None

    @property
    def shown(self) -> str:
        """The observed value in its unit: `412 ms`, `0.83 %`, `3.1 /s`, `—` when none."""
        if self.observed is None:
            return "—"
        if self.unit == "%":
            return f"{self.observed * 100:.3g} %"
        return f"{self.observed:.4g} {self.unit}".strip()


def unit_of(metric: str, stat: str | None) -> str:
    """The unit an observed value of `metric.stat` is in (times in ms, ratios shown in %)."""
    if stat in ("count", "lost_runs"):
        return ""
    if metric == "error_rate" or stat == "shed_ratio":
        return "%"
    if metric == "throughput":
        return "/s"
    if metric == "soak":
        return "/turn" if stat and stat.endswith("_per_turn") else "/h"
    return "ms"


def check(thresholds: list[Threshold], observed: dict[str, float | None]) -> list[ThresholdCheck]:
    """Every threshold against the observed values, each on its own (the decision, load.json, the CLI's table and
    junit.xml all read these)."""
    out = []
    for t in thresholds:
        value = observed.get(t.key)
        out.append(ThresholdCheck(text=t.text, key=t.key, observed=value, unit=unit_of(t.metric, t.stat),
                                  holds=None if value is None else t.holds(value)))
    return out


class BaselineRule(BaseModel):
    """A rule against a baseline run's value (`T4.p95 <= baseline * 1.10`), or `no new FAIL` (`metric` None)."""

    text: str
    metric: str | None = None
    op: str = "<="
    factor: float = 1.0
    margin: float = 0.0

    @classmethod
    def parse(cls, text: str) -> BaselineRule:
        if text.strip().lower() == "no new fail":
            return cls(text=text)
        m = _BASELINE.match(text)
        if not m:
            raise ValueError(f"baseline rule {text!r} is not of the form 'T4.p95 <= baseline * 1.10', "
                             "'error_rate <= baseline + 0.5%' or 'no new FAIL'")
        value = amount(m.group("value") or "0", m.group("unit"))
        kind = m.group("kind")
        return cls(text=text, metric=m.group("metric"), op=m.group("op"),
                   factor=value if kind == "*" else 1.0, margin=value if kind == "+" else 0.0)

    def limit(self, base: float) -> float:
        return base * self.factor + self.margin

    def holds(self, observed: float, base: float) -> bool:
        return bool(OPS[self.op](observed, self.limit(base)))
