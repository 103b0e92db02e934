"""The gate's one decision and its outputs, for the live run and for `rig report` alike.

It reads the evidence store (verdicts and their flips across repeats, the T-code rows), the manifest (the policy,
and the decision's other inputs: a load run, a baseline) and how the run ended (`rig.run_end`); it writes
results.json, report.md, junit.xml and report.html.
"""

from __future__ import annotations

from pathlib import Path

from rig.compare.baseline import decide_with_baseline
from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.measure.aggregate import observed
from rig.policy import Decision, Policy, decide_gate
from rig.report import build_report_data, write_reports
from rig.report.data import ReportData, store_verdicts
from rig.results.load import LoadSummary, observed_for_policy
from rig.run_end import Finished, ended_reasons, finishing
from rig.runmanifest import RunManifest

OUTPUTS = ("results.json", "report.md", "junit.xml", "report.html", "coverage.json")


def finish_gate_dir(run_dir: Path) -> Finished:
    """`rig report` of a gate run: its one decision, rebuilt from its directory."""
    with finishing(run_dir, "gate") as (manifest, store, early):
        decision, _ = finish_gate(run_dir, store, manifest)
    return Finished(run_dir, "gate", decision, early, [run_dir / n for n in OUTPUTS if (run_dir / n).exists()])


def finish_gate(run_dir: Path, store: EvidenceStore, manifest: RunManifest) -> tuple[Decision, ReportData]:
    """Decide the gate from what its directory holds and write its reports; the decision and the report's data."""
    policy = manifest.policy or Policy()
    observed_now = observed(store.measures())
    if manifest.decision_inputs.load:
        observed_now.update(load_observed(Path(manifest.decision_inputs.load)))
    verdicts, flips = store_verdicts(store)
    extra = ended_reasons(manifest, store) + [f"case {v.case_id}: {v.reason}" for v in verdicts if v.case_id in flips]
    decision = decide_gate(verdicts, policy, observed_now, extra)
    data = build_report_data(store, decision, manifest)
    write_reports(run_dir, data)
    if data.coverage is not None:  # the operations × actor × state matrix (docs/schemas/coverage.schema.json)
        (run_dir / "coverage.json").write_text(data.coverage.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if manifest.decision_inputs.baseline:  # compare reads this run's results.json: decide again once it is written

        decision = decide_with_baseline(decision, policy.baseline, Path(manifest.decision_inputs.baseline), run_dir)
        data = build_report_data(store, decision, manifest)
        write_reports(run_dir, data)
    return decision, data


def load_observed(load_dir: Path) -> dict[str, float | None]:
    """Threshold keys from a load run's `load.json` (`T4.p95@20`, `error_rate`, …)."""
    path = load_dir / "load.json"
    if not path.exists():
        raise ConfigError(f"{load_dir} holds no load.json", fix="pass the run directory of a finished rig load")
    try:
        summary = LoadSummary.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path} is not a load.json this rig can read: {str(exc)[:300]}",
                          fix="re-run rig load, or rebuild it from the run's evidence") from None
    return observed_for_policy(summary)
