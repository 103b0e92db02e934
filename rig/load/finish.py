"""The load run's one decision and its outputs, for the live run and for `rig report` alike: load.json (with every
threshold checked), the decision kept in the store, junit.xml, report.html and report.md, from the run's summary,
its policy and baseline (the manifest), and how it ended (`rig.run_end`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rig.compare.baseline import decide_with_baseline
from rig.evidence import EvidenceStore
from rig.load.plan import LoadPlan
from rig.load.summary import load_summary
from rig.measure import labels
from rig.measure.tcodes import PACE_CODES, is_tcode
from rig.measure.thresholds import check
from rig.policy import Decision, Policy, decide_gate
from rig.report.capacity_section import capacity_decision, capacity_html, capacity_junit, step_label
from rig.report.chaos_section import chaos_bands, chaos_section
from rig.report.charts import Band
from rig.report.data import build_report_data
from rig.report.html import html_report
from rig.report.junit import load_junit
from rig.report.load_section import load_section
from rig.report.markdown import markdown_report
from rig.report.soak_section import soak_html
from rig.results.capacity import CapacityResult
from rig.results.load import LoadSummary, WorkerRecord, observed_for_policy
from rig.run_end import Finished, ended_reasons, finishing
from rig.runmanifest import RunManifest


def finish_load(run_dir: Path, store: EvidenceStore, manifest: RunManifest, summary: LoadSummary) -> Decision:
    """Write load.json, decide, keep the decision in the store and write the reports (with the chaos analysis the
    summary holds, when a schedule ran)."""
    policy = manifest.policy or Policy()
    summary.thresholds = check(policy.thresholds, observed_for_policy(summary))
    if summary.client is not None and summary.client.saturated:  # a saturated client's timings cannot decide
        for c, t in zip(summary.thresholds, policy.thresholds, strict=True):
            if client_timed(t.metric):
                c.holds = None
    (run_dir / "load.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    saved = store.meta("capacity")
    capacity = CapacityResult.model_validate(saved) if saved else None  # a `rig capacity` run: its search decides
    decision = capacity_decision(capacity) if capacity is not None else decide_load(summary, policy)
    ended = ended_reasons(manifest, store)
    if ended:
        decision = Decision(decision="fail" if decision.decision == "fail" else "undecided",
                            reasons=[*ended, *decision.reasons])
    if manifest.decision_inputs.baseline:

        decision = decide_with_baseline(decision, policy.baseline, Path(manifest.decision_inputs.baseline), run_dir)
    store.set_meta("decision", decision.model_dump(mode="json"))
    if capacity is not None:
        (run_dir / "capacity.json").write_text(capacity.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (run_dir / "junit.xml").write_text(capacity_junit(capacity, decision), encoding="utf-8")
    else:
        (run_dir / "junit.xml").write_text(load_junit(summary, decision), encoding="utf-8")
    data = build_report_data(store, decision, manifest)
    sections = [("Chaos", chaos_section(summary.chaos))] if summary.chaos else []
    if capacity is not None:
        sections.insert(0, ("Capacity", capacity_html(capacity)))
    if summary.soak is not None:
        sections.insert(0, ("Soak", soak_html(summary.soak)))
    bands = chaos_bands(store)
    bands += [Band(m.start_ms, m.end_ms, f"stage {m.index}: {m.from_users}→{m.to_users} users", "stage")
              for m in summary.stages]  # each stage of the shape, on the same axis as the fault windows
    if capacity is not None:  # each capacity step's judged window, the overload and recovery steps named so
        bands += [Band(s.window_start_ms, s.window_end_ms, step_label(capacity, s), "step") for s in capacity.steps]
    if summary.client is not None:  # seconds whose timings carry the load generator's own delay
        bands += [Band(a, b, "load generator past its CPU or loop-lag limit", "client")
                  for a, b in summary.client.past_limits_ms]
    section = load_section(store, summary, bands)
    (run_dir / "report.html").write_text(html_report(data, [("Load", section), *sections]), encoding="utf-8")
    (run_dir / "report.md").write_text(markdown_report(data), encoding="utf-8")
    return decision


def decide_load(summary: LoadSummary, policy: Policy) -> Decision:
    """The load run's decision: its thresholds when the policy has some; a run that measured no run is never green."""
    if summary.runs == 0:
        reasons = ["no run was measured: nothing to decide on"]
        if summary.login_failures:
            reasons.append(f"{summary.login_failures} login(s) failed")
        if summary.errors_by_reason:
            reasons.append("errors: " + ", ".join(f"{k} ×{v}" for k, v in sorted(summary.errors_by_reason.items())))
        return Decision(decision="undecided", reasons=reasons)
    if not (summary.delivered_runs if summary.delivered_runs is not None else summary.completed_runs):
        return _nothing_delivered(summary, policy)
    if policy.thresholds:
        decision = judge_thresholds(summary, policy)
    else:
        decision = Decision(decision="recorded",
                            reasons=["no load thresholds in the policy; numbers recorded, nothing decided"])
    drifting = summary.soak.drifting if summary.soak else []
    starved = summary.client is not None and summary.client.saturated
    timed = [d for d in drifting if starved and d.key.startswith(("soak.T4", "soak.T5"))]  # the client's delay too
    drifting = [d for d in drifting if d not in timed]
    if drifting:  # a resource that keeps rising under a steady load leaks, whatever the latencies say
        decision = Decision(decision="fail", reasons=[f"soak: {d.series} {d.why}" for d in drifting]
                            + [r for r in decision.reasons if decision.decision == "fail"])
    if timed and decision.decision != "fail":  # a timing that drifts on a saturated client may be the client's
        decision = Decision(decision="undecided", reasons=[
            *(f"soak: {d.series} {d.why}, but the client was saturated ({summary.client.why}): the drift may be "
              "its own" for d in timed if summary.client is not None), *decision.reasons])
    moved = [s for s in summary.soak.slopes if s.machine] if summary.soak else []
    if moved and decision.decision != "fail":  # a drift the busy machine could have made: neither leak nor pass
        decision = Decision(decision="undecided", reasons=[*(f"soak: {d.series} {d.why}" for d in moved),
                                                           "run the soak again on a machine with nothing else "
                                                           "running", *decision.reasons])
    if summary.login_failures and decision.decision != "fail":  # fewer users than asked for: not a clean run
        failed = sorted(w for w in map(labels.login_refused, summary.errors_by_reason) if w is not None)
        decision = Decision(decision="undecided", reasons=[
            f"{summary.login_failures} login(s) failed ({', '.join(failed)})", *decision.reasons])
    if summary.rig_errors and decision.decision != "fail":  # the rig broke some tasks: its numbers are not whole
        decision = Decision(decision="undecided", reasons=[
            f"{summary.rig_errors} task(s) broke in the rig's own code (rig_error; tracebacks in the Locust logs)",
            *decision.reasons])
    if summary.lost_workers and decision.decision != "fail":  # the load fell while the run went on
        decision = Decision(decision="undecided", reasons=[*map(lost_worker_line, summary.lost_workers),
                                                           *decision.reasons])
    return decision


def judge_thresholds(summary: LoadSummary, policy: Policy) -> Decision:
    """The policy's thresholds against the run; on a saturated client a threshold on a T-code is undecided whatever
    it observed (the client's own delay is in every timing it took), and says so."""
    client = summary.client
    if client is None or not client.saturated:
        return decide_gate([], policy, observed_for_policy(summary), judge_cases=False)
    timed = {t.key for t in policy.thresholds if client_timed(t.metric)}
    untimed = policy.model_copy(update={"thresholds": [t for t in policy.thresholds if t.key not in timed]})
    decision = decide_gate([], untimed, observed_for_policy(summary), judge_cases=False)
    said = [f"threshold {c.text!r} observed {c.shown}, but the client was saturated: {client.why}"
            for c in summary.thresholds if c.key in timed]
    if decision.decision == "fail":
        return Decision(decision="fail", reasons=[*decision.reasons, *said])
    return Decision(decision="undecided", reasons=[*said, *(decision.reasons if decision.decision != "pass" else [])])


def client_timed(metric: str) -> bool:
    """A metric the client's own clock measured (a T-code, ITL, TPOT): a saturated client's delay is in it."""
    return is_tcode(metric) or metric in PACE_CODES


def _nothing_delivered(summary: LoadSummary, policy: Policy) -> Decision:
    """Runs were sent and none came back whole (none completed, or none delivered on its stream): never green — a
    threshold the runs break fails the run, else it is undecided, saying how the runs ended."""
    ends = ", ".join(f"{k} ×{v}" for k, v in sorted(summary.end_states.items())) or "none recorded"
    errors = ", ".join(f"{k} ×{v}" for k, v in sorted(summary.errors_by_reason.items())) or "none"
    why = (f"no answer of {summary.runs} run(s) was delivered whole in {summary.duration_s:.0f} s (ends: {ends}; "
           f"errors: {errors}); an answer that never ends, a stream that breaks or a target slower than the run")
    if policy.thresholds:
        judged = judge_thresholds(summary, policy)
        if judged.decision == "fail":
            return Decision(decision="fail", reasons=[*judged.reasons, why])
    return Decision(decision="undecided", reasons=[why])


def lost_worker_line(w: WorkerRecord) -> str:
    """`worker H lost at 12:00:03 (last heard 12:00:01), 41 rows and 230 requests counted from it`."""
    def clock(ms: float | None) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%H:%M:%S") if ms else "?"

    when = f"lost at {clock(w.lost_ms)} (last heard {clock(w.silent_since_ms)})" if w.lost_ms else "left mid-run"
    if w.returned_ms:
        when += f", back at {clock(w.returned_ms)}"
    return f"worker {w.worker_id} {when}, {w.rows} rows and {w.requests} requests counted from it"


def finish_load_dir(run_dir: Path) -> Finished:
    """`rig report` of a load run: its summary rebuilt from the store (over the time it really ran, when it was
    killed), the chaos analysis its extension wrote kept, and its one decision."""
    with finishing(run_dir, "load", "capacity") as (manifest, store, early):
        decision = _refinish(run_dir, manifest, store, early)
    return Finished(run_dir, manifest.kind, decision, early, [run_dir / "load.json", run_dir / "junit.xml",
                                                       run_dir / "report.html"])


def _refinish(run_dir: Path, manifest: RunManifest, store: EvidenceStore, early: str | None) -> Decision:
    plan = LoadPlan.model_validate(store.meta("plan")) if store.meta("plan") else None
    previous = _previous(run_dir / "load.json")
    duration = (plan.duration_s if plan else None) or (previous.duration_s if previous else 0.0)
    if previous is not None and previous.duration_s and not early:  # a finished run: its summary's duration
        duration = previous.duration_s
    elif early:  # the run lasted until its last evidence, not its planned duration
        started = store.meta("load_started_ms")
        last = store.last_activity_ms()
        if started and last:
            duration = max(0.001, min(duration or float("inf"), (last - float(started)) / 1000))
    workers = previous.workers if previous is not None else _count_worker_logs(run_dir)
    users = previous.users if previous is not None else 0
    summary = load_summary(store, run_dir, duration, workers, users)
    if previous is not None and previous.chaos is not None and summary.chaos is None:
        summary.chaos = previous.chaos  # the chaos plug-in's, when it got to write it
    return finish_load(run_dir, store, manifest, summary)


def _previous(path: Path) -> LoadSummary | None:
    """The load.json a run wrote before, when there is a whole one."""
    try:
        return LoadSummary.model_validate_json(path.read_bytes()) if path.exists() else None
    except ValueError:
        return None


def _count_worker_logs(run_dir: Path) -> int:
    return len(list(run_dir.glob("locust-worker-*.log")))
