"""Item reasons come from evidence: an item whose verdict depends on an observation either builds its reason
from observed values or passes them as `seen=`, so a FAIL never reads like a PASS."""

from __future__ import annotations

import ast
from pathlib import Path

from rig.target.recording import with_seen
from rig.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]


def _fixed_claims() -> list[str]:
    """`ctx.item(name, <observed>, "<fixed text>")` calls with no `seen=`: a reason that cannot change with the verdict."""
    found = []
    for path in sorted((ROOT / "scenarios").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("item", "declared")):
                continue
            at = 1 if node.func.attr == "item" else 2
            if len(node.args) <= at + 1 or any(k.arg == "seen" for k in node.keywords):
                continue
            ok, reason = node.args[at], node.args[at + 1]
            fixed_verdict = isinstance(ok, ast.Constant) or ast.unparse(ok).startswith("Verdict.")
            if not fixed_verdict and isinstance(reason, ast.Constant):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {reason.value!r}")
    return found


def test_no_item_states_a_fixed_claim_whatever_it_observed() -> None:
    assert _fixed_claims() == []


def test_a_fail_reason_names_the_expectation_and_what_was_seen() -> None:
    fail = with_seen("no P21 in the new answer", Verdict.FAIL, {"new_citations": [("P21", 2), ("P32", 1)]})
    assert fail.startswith("expected no P21 in the new answer; seen: new_citations") and "'P21', 2" in fail
    ok = with_seen("no P21 in the new answer", Verdict.PASS, {"new_citations": [("P32", 1)]})
    assert ok.startswith("no P21 in the new answer (seen: ")
    assert with_seen("x", Verdict.U, {"a": 1}).startswith("could not tell whether x")
