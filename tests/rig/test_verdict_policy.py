"""The aggregation rule, gate decisions, thresholds, redaction and percentiles."""

from __future__ import annotations

import pytest

from rig.policy import CaseVerdict, Policy, Threshold, decide_gate
from rig.redact import MASK, Redactor
from rig.stats import percentile, summarize
from rig.verdict import Item, Verdict, aggregate


def items(*verdicts: Verdict, required: bool = True) -> list[Item]:
    return [Item(name=f"i{n}", verdict=v, reason=v.value, required=required) for n, v in enumerate(verdicts)]


def test_a_shown_failure_is_never_cancelled_by_an_unknown() -> None:
    assert aggregate(items(Verdict.PASS, Verdict.U, Verdict.FAIL))[0] == Verdict.FAIL
    assert aggregate(items(Verdict.PASS, Verdict.U))[0] == Verdict.U
    assert aggregate(items(Verdict.PASS, Verdict.BLOCKED, Verdict.U))[0] == Verdict.BLOCKED
    assert aggregate(items(Verdict.PASS, Verdict.PASS))[0] == Verdict.PASS
    assert aggregate(items(Verdict.NA))[0] == Verdict.NA
    assert aggregate([])[0] == Verdict.U, "no evidence is never a PASS"
    assert aggregate(items(Verdict.PASS) + items(Verdict.U, required=False))[0] == Verdict.PASS


def test_gate_decision_and_exit_codes() -> None:
    policy = Policy()
    ok = [CaseVerdict(case_id=1, verdict=Verdict.PASS), CaseVerdict(case_id=11, verdict=Verdict.BLOCKED, reason="x")]
    assert decide_gate(ok, policy).exit_code == 0
    assert decide_gate(ok + [CaseVerdict(case_id=2, verdict=Verdict.U, reason="?")], policy).exit_code == 2
    assert decide_gate(ok + [CaseVerdict(case_id=3, verdict=Verdict.BLOCKED)], policy).exit_code == 2
    failed = decide_gate(ok + [CaseVerdict(case_id=4, verdict=Verdict.FAIL, reason="leak"),
                               CaseVerdict(case_id=2, verdict=Verdict.U)], policy)
    assert failed.exit_code == 1 and "case 4 FAIL: leak" in failed.reasons[0]


def test_thresholds_parse_units_and_decide() -> None:
    t = Threshold.parse("T4.p95 < 3s at 20 users")
    assert (t.metric, t.stat, t.op, t.value, t.at_users) == ("T4", "p95", "<", 3000.0, 20)
    assert Threshold.parse("error_rate < 1%").value == pytest.approx(0.01)
    with pytest.raises(ValueError):
        Threshold.parse("T4 is fast")
    policy = Policy(thresholds=["T4.p95 < 500ms"])  # type: ignore[list-item]
    assert decide_gate([], policy, {"T4.p95": 420.0}).decision == "pass"
    assert decide_gate([], policy, {"T4.p95": 620.0}).decision == "fail"
    assert decide_gate([], policy, {}).decision == "undecided"


def test_redactor_masks_known_secrets_and_credential_shapes() -> None:
    r = Redactor()
    r.add("hunter2-secret")
    data = {"password": "x", "nested": ["use hunter2-secret now", "Bearer abcdefghijklmnop"],
            "key": "sk-live-0123456789", "api_key_masked": "****1234", "token": None}
    out = r.value(data)
    assert out["password"] == MASK and "hunter2" not in str(out) and "abcdefghijklmnop" not in str(out)
    assert "0123456789" not in str(out) and out["api_key_masked"] == "****1234" and out["token"] is None


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 95), percentile(values, 99)) == (50.0, 95.0, 99.0)
    assert percentile([], 50) is None and summarize([]).count == 0
    assert summarize([3.0, 1.0, 2.0]).p50 == 2.0


def test_a_policy_cannot_overclaim() -> None:
    """A case that does not exist cannot be required or allowed; a required case that did not run leaves the
    gate undecided (`required: all` means every case that ran)."""
    with pytest.raises(ValueError, match="no case 999 in the eval set"):
        Policy(required=[1, 2, 999])
    with pytest.raises(ValueError, match="no case 0"):
        Policy(allow_blocked={0: "why"})
    ran = [CaseVerdict(case_id=1, verdict=Verdict.PASS)]
    partial = decide_gate(ran, Policy(required=[1, 2]))
    assert partial.decision == "undecided"
    assert partial.reasons == ["case 2 is required by the policy and did not run (select it, or drop it from required)"]
    assert decide_gate(ran, Policy()).decision == "pass"
    assert decide_gate([], Policy(required=[1, 2]), judge_cases=False).decision == "pass"  # a load judges thresholds
