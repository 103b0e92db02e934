"""Gate policy and the gate decision: required cases, allowed BLOCKED with reasons, metric thresholds.

Tracks are never averaged: every required case must PASS (or be an allowed BLOCKED/N/A), and every
threshold must hold on its own. Exit code 0 pass, 1 fail, 2 the gate could not decide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.catalog import load_eval_set
from rig.measure.thresholds import BaselineRule, Threshold, check
from rig.verdict import Verdict
from rig.yamlfile import load_yaml_model

DEFAULT_ALLOWED_BLOCKED = {
    11: "the eval set: without a declared scope-combination rule the case stays BLOCKED (do not guess)",
    26: "conditional: needs a controlled restart window (a restarter)",
    35: "conditional: needs a safe log-truncation fixture (span budget)",
    37: "conditional: runs only where per-user model configuration is offered",
    38: "conditional: runs only where per-user model configuration is offered",
}


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a mistyped key must not silently loosen a release gate

    required: list[int] | Literal["all"] = "all"
    allow_blocked: dict[int, str] = Field(default_factory=lambda: dict(DEFAULT_ALLOWED_BLOCKED))
    thresholds: list[Threshold] = Field(default_factory=list)
    baseline: list[str] = Field(default_factory=list)  # rules against a baseline run (rig.compare.baseline)

    @field_validator("required", "allow_blocked")
    @classmethod
    def _known_cases(cls, value: object) -> object:
        ids = value if isinstance(value, list) else list(value) if isinstance(value, dict) else []
        known = {c.case_id for c in load_eval_set().reliability}
        unknown = sorted(i for i in ids if i not in known)
        if unknown:
            raise ValueError(f"no case {', '.join(map(str, unknown))} in the eval set (its cases are "
                             f"{min(known)}–{max(known)}): a policy cannot require or allow what does not exist")
        return value

    @field_validator("baseline")
    @classmethod
    def _baseline_rules(cls, value: list[str]) -> list[str]:
        for rule in value:
            BaselineRule.parse(rule)  # a ValueError names the rule and the expected forms
        return value

    @field_validator("thresholds", mode="before")
    @classmethod
    def _parse(cls, value: object) -> object:
        if isinstance(value, list):
            return [Threshold.parse(v) if isinstance(v, str) else v for v in value]
        return value

    def is_required(self, case_id: int) -> bool:
        return self.required == "all" or case_id in self.required


def load_policy(path: Path | None) -> Policy:
    """The policy file (the defaults without one); an unknown or malformed key is a ConfigError naming it."""
    if path is None:
        return Policy()
    return load_yaml_model(path, Policy, what="policy", flag="--policy", shape_fix="see docs/policy.example.yaml")


class CaseVerdict(BaseModel):
    case_id: int
    verdict: Verdict
    reason: str = ""


class Decision(BaseModel):
    """pass/fail/undecided decide a release; `recorded` is a load run with nothing to decide (exit 0)."""

    decision: Literal["pass", "fail", "undecided", "recorded"]
    reasons: list[str]

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "undecided": 2, "recorded": 0}[self.decision]


def decide_gate(verdicts: list[CaseVerdict], policy: Policy, observed: dict[str, float | None] | None = None,
                extra_undecided: list[str] | None = None, *, judge_cases: bool = True) -> Decision:
    """The decision with every reason: failures first, then what left it undecided. A case the policy names as
    required must have run (`required: all` means every case that ran); `judge_cases=False` judges the thresholds
    alone (a load run)."""
    fails: list[str] = []
    undecided: list[str] = list(extra_undecided or [])
    ran = {v.case_id for v in verdicts}
    if judge_cases and isinstance(policy.required, list):
        undecided += [f"case {c} is required by the policy and did not run (select it, or drop it from required)"
                      for c in policy.required if c not in ran]
    for v in verdicts:
        if not policy.is_required(v.case_id):
            continue
        if v.verdict == Verdict.FAIL:
            fails.append(f"case {v.case_id} FAIL: {v.reason}")
        elif v.verdict == Verdict.BLOCKED:
            if v.case_id not in policy.allow_blocked:
                undecided.append(f"case {v.case_id} BLOCKED and not allowed by the policy: {v.reason}")
        elif v.verdict in (Verdict.U, Verdict.NOT_RUN):
            undecided.append(f"case {v.case_id} {v.verdict.value}: {v.reason}")
    for c in check(policy.thresholds, observed or {}):
        if c.holds is None:
            undecided.append(f"threshold {c.text!r}: no measurement of {c.key}")
        elif not c.holds:
            fails.append(f"threshold {c.text!r} does not hold: observed {c.shown}")
    if fails:
        return Decision(decision="fail", reasons=fails + undecided)
    if undecided:
        return Decision(decision="undecided", reasons=undecided)
    return Decision(decision="pass", reasons=["every required case passed and every threshold holds"])
