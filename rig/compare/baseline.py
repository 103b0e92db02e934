"""Deciding against a baseline run: policy rules relative to it, plus `rig compare`'s statistical findings.

Rules (the policy's `baseline:` list; default `no new FAIL`):

    T4.p95 <= baseline * 1.10        a T-code headline percentile against the baseline's, times a factor
    T5.p50 <= baseline + 200ms       … or plus a margin (ms, s)
    error_rate <= baseline + 0.5%    the share of failed runs (load: load.json's error_ratio)
    no new FAIL                      no case or item that was not FAIL in the baseline is FAIL now

`rig gate --baseline DIR` and `rig load --baseline DIR` (or `last-pass`: the newest passing run of the same
kind and target in the history) apply them after their own decision; the exit codes stay the gate's.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from rig.compare.model import CompareResult
from rig.compare.runs import compare_dirs, read_measures
from rig.errors import ConfigError
from rig.measure.aggregate import observed, run_ends
from rig.policy import Decision

_RULE = re.compile(r"^\s*(?P<metric>T\d+\.p\d+|T\d+\.mean|error_rate)\s*(?P<op><=|<|>=|>)\s*baseline\s*"
                   r"(?:(?P<kind>[*+])\s*(?P<value>[\d.]+)\s*(?P<unit>ms|s|%)?)?\s*$")
_OPS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, "<": operator.lt, ">=": operator.ge,
                                                   ">": operator.gt}


class BaselineRule(BaseModel):
    text: str
    metric: str | None = None  # None for "no new FAIL"
    op: str = "<="
    factor: float = 1.0
    margin: float = 0.0

    @classmethod
    def parse(cls, text: str) -> BaselineRule:
        if text.strip().lower() == "no new fail":
            return cls(text=text)
        m = _RULE.match(text)
        if not m:
            raise ValueError(f"baseline rule {text!r} is not of the form 'T4.p95 <= baseline * 1.10', "
                             "'error_rate <= baseline + 0.5%' or 'no new FAIL'")
        value = float(m.group("value") or 0)
        unit = m.group("unit")
        value = value * 1000 if unit == "s" else value / 100 if unit == "%" else value
        kind = m.group("kind")
        return cls(text=text, metric=m.group("metric"), op=m.group("op"),
                   factor=value if kind == "*" else 1.0, margin=value if kind == "+" else 0.0)

    def limit(self, base: float) -> float:
        return base * self.factor + self.margin


def error_rate(run_dir: Path) -> float | None:
    """The share of runs that failed: load.json's error ratio, else failed runs over all runs in the store."""
    summary = run_dir / "load.json"
    if summary.exists():
        return float(json.loads(summary.read_text(encoding="utf-8")).get("error_ratio") or 0.0)
    ends = run_ends(read_measures(run_dir))
    runs = sum(ends.values())
    failed = sum(n for k, n in ends.items() if k.startswith(("failed/", "interrupted/")))
    return failed / runs if runs else None


def judge(rules: list[BaselineRule], base: Path, new: Path, comparison: CompareResult) -> tuple[list[str], list[str]]:
    """(failures, undecided) of the baseline rules and the comparison's statistical regressions."""
    if comparison.decision == "not comparable":
        return [], [f"baseline {base} is not comparable: " + "; ".join(comparison.reasons)]
    fails: list[str] = []
    undecided: list[str] = []
    ob, on = observed(read_measures(base)), observed(read_measures(new))
    ob["error_rate"], on["error_rate"] = error_rate(base), error_rate(new)
    for rule in rules:
        if rule.metric is None:
            worse = [f"{v.case}{'/' + v.item if v.item else ''}" for p in comparison.parts for v in p.verdict_changes
                     if v.new == "FAIL" and v.base != "FAIL"]
            if worse:
                fails.append(f"{rule.text}: new FAIL in {', '.join(worse[:8])}")
            continue
        b, n = ob.get(rule.metric), on.get(rule.metric)
        if b is None or n is None:
            undecided.append(f"{rule.text}: {rule.metric} not measured in {'the baseline' if b is None else 'this run'}")
        elif not _OPS[rule.op](n, rule.limit(b)):
            fails.append(f"{rule.text}: {n:.4g} vs baseline {b:.4g} (limit {rule.limit(b):.4g})")
    if comparison.decision == "regressed":  # the statistical findings: T-code percentiles and rates
        fails += [f"compared with the baseline: {r}" for r in comparison.reasons if " regressed" in r]
    return fails, undecided


def decide_with_baseline(decision: Decision, rules: list[str], base: Path, new: Path) -> Decision:
    """The run's own decision, made worse (never better) by the baseline rules and the comparison."""
    parsed = [BaselineRule.parse(r) for r in (rules or ["no new FAIL"])]
    comparison = compare_dirs(base, new)
    fails, undecided = judge(parsed, base, new, comparison)
    reasons = list(decision.reasons) + fails + undecided
    if fails:
        return Decision(decision="fail", reasons=reasons)
    if undecided and decision.decision in ("pass", "recorded"):
        return Decision(decision="undecided", reasons=reasons)
    return Decision(decision=decision.decision, reasons=reasons + [f"no regression against baseline {base}"])


def resolve_baseline(value: str, kind: str, target_url: str | None, reports_root: Path) -> Path:
    """A run directory, or `last-pass`: the newest passing run of this kind and target in the history."""
    if value != "last-pass":
        path = Path(value)
        if not (path / "manifest.json").exists():
            raise ConfigError(f"baseline {path} is not a run directory", fix="pass a run directory, or last-pass")
        return path
    from rig.compare.history import History

    found = History(reports_root).last_pass(kind, target_url)
    if found is None:
        raise ConfigError(f"no passing {kind} run of {target_url or 'the embedded target'} in {reports_root}",
                          fix="run once without --baseline to record one, or pass a run directory")
    return found
