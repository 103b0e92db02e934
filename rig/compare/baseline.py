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

from pathlib import Path

from rig.compare.history import History
from rig.compare.model import CompareResult
from rig.compare.runs import compare_dirs, read_measures
from rig.errors import ConfigError
from rig.measure.aggregate import ended_run_ids, observed, run_ends
from rig.measure.tally import tally
from rig.measure.thresholds import BaselineRule
from rig.policy import Decision
from rig.results.load import LoadSummary


def error_rate(run_dir: Path) -> float | None:
    """The share of tasks that did not finish, by the rig's one count of it (`rig.measure.tally`): load.json's error
    ratio where the run wrote one, else the same tally over the run's stored rows."""
    summary = run_dir / "load.json"
    if summary.exists():
        return LoadSummary.model_validate_json(summary.read_bytes()).error_ratio
    rows = read_measures(run_dir)
    return tally(run_ends(rows), ended_run_ids(rows), [m for m in rows if m.code == "error"],
                 [m for m in rows if m.code == "task"]).error_ratio


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
        elif not rule.holds(n, b):
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

    found = History(reports_root).last_pass(kind, target_url)
    if found is None:
        raise ConfigError(f"no passing {kind} run of {target_url or 'the embedded target'} in {reports_root}",
                          fix="run once without --baseline to record one, or pass a run directory")
    return found
