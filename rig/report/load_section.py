"""The load part of a report: summary numbers and curves over time."""

from __future__ import annotations

from rig.evidence import EvidenceStore
from rig.measure import labels
from rig.measure.aggregate import ended_run_ids, is_run_end
from rig.measure.tally import counted_errors
from rig.report.charts import Band, line_chart, windows
from rig.report.plain import escape
from rig.results.load import LoadSummary, PhaseStats


def load_section(store: EvidenceStore, summary: LoadSummary, bands: list[Band] | None = None) -> str:
    """The load's numbers, then its curves on one time axis, with `bands` (epoch ms) shaded on each."""
    measures = [m for m in store.measures() if m.case_id is None and m.ts_ms]
    if not measures:
        return "<p>no load samples</p>"
    t0 = min(m.ts_ms for m in measures if m.ts_ms)
    rel = [(m, (m.ts_ms - t0) / 1000) for m in measures if m.ts_ms]
    ended = ended_run_ids(measures)
    done = [(t, 1.0) for m, t in rel if is_run_end(m) and labels.completed(m.label)]
    # failures as the error ratio counts them (rig.measure.tally): runs that ended failed, and tasks without an end;
    # a user's own stop is not one, and a failed run's own error row is not counted again
    own = {id(m) for m in counted_errors([m for m, _ in rel if m.code == "error"], ended)}
    failed = [(t, 1.0) for m, t in rel if (is_run_end(m) and not labels.completed(m.label)
                                            and not labels.on_purpose(m.label)) or id(m) in own]
    stopped = [(t, 1.0) for m, t in rel if is_run_end(m) and labels.on_purpose(m.label)]
    t4 = [(t, m.value) for m, t in rel if m.code == "T4" and m.source == "client"]
    t5 = [(t, m.value) for m, t in rel if m.code == "T5" and m.source == "client" and not labels.without_body(m.label)]
    lag = [(t, m.value) for m, t in rel if m.code == "send_lag"]
    series = {n: [((p.ts_ms - t0) / 1000, p.value) for p in store.series(n)]
              for n in ("users", "target_cpu", "target_rss_bytes")}
    rss_mb = [(t, v / 1e6) for t, v in series["target_rss_bytes"]]
    all_x = [t for _, t in rel] + [t for pts in series.values() for t, _ in pts]
    x_range = (min(0.0, *all_x), max(all_x))  # one axis for every chart, so curves and chaos bands line up
    band_rel = [Band((b.start - t0) / 1000, (b.end - t0) / 1000, b.label, b.kind) for b in bands or []]
    rows = "".join(f"<tr><td>{escape(code)}</td><td>{e.source}</td><td class=num>{e.count}</td>" +
                   "".join(f"<td class=num>{(getattr(e, k) or 0):.1f}</td>" for k in ("p50", "p90", "p95", "p99"))
                   + "</tr>" for code, e in summary.t_codes.items())
    errors = "".join(f"<li>{escape(str(k))}: {v}</li>" for k, v in summary.errors_by_reason.items())
    charts = [
        line_chart({"completed runs/s": windows(done, 1, "rate", x_range),
                    "stopped (by a user or the run's end)/s": windows(stopped, 1, "rate", x_range),
                    "failed/s": windows(failed, 1, "rate", x_range)},
                   title="throughput", unit="runs/s", bands=band_rel, x_range=x_range),
        line_chart({"T4 p95": windows(t4, 5, "p95"), "T5 p95": windows(t5, 5, "p95")}, title="latency (5 s windows)",
                   unit="ms", bands=band_rel, x_range=x_range),
        line_chart({"users": series["users"]}, title="users", unit="users", bands=band_rel, x_range=x_range),
        line_chart({"cpu (cores)": series["target_cpu"]}, title="target CPU", unit="cores busy", bands=band_rel,
                   x_range=x_range),
        line_chart({"rss (MB)": rss_mb}, title="target memory", unit="MB", bands=band_rel, x_range=x_range),
    ]
    if lag:
        charts.append(line_chart({"send lag p95": windows(lag, 5, "p95")}, title="send lag (open loop)", unit="ms",
                                 bands=band_rel, x_range=x_range))
    return (f"<p>{escape(error_headline(summary))}</p>" + _replay(summary) +
            f"<p>{summary.users} users, {summary.workers} worker(s), {summary.duration_s:.0f} s: "
            f"{summary.completed_runs} completed runs ({summary.throughput_rps:.2f}/s), "
            f"{summary.requests} HTTP requests ({summary.requests_per_s:.1f}/s), error ratio over the whole run "
            f"{summary.error_ratio:.2%}, send lag p99 {summary.send_lag.p99 or 0:.1f} ms</p>" + _phases(summary) +
            f"<table><tr><th>code</th><th>source</th><th>n</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th></tr>"
            f"{rows}</table><ul>{errors}</ul>" + _workers(summary, t0) + "".join(f"<div>{c}</div>" for c in charts))


def error_headline(summary: LoadSummary) -> str:
    """The error ratio nobody injected first, then what the injected fault windows caused."""
    p = summary.phases
    steady = p.steady.error_ratio
    head = (f"error ratio {steady:.2%} in steady state ({p.steady.failed} of {p.steady.attempts})" if steady is not None
            else "no run in steady state")
    if not p.windows:
        return head + "; no fault was injected"
    caused = ", ".join(f"{label} {n}" for label, n in sorted(p.in_fault.end_states.items())
                       if not labels.completed(label) and not labels.on_purpose(label))  # stops a user or the rig asked for
    recovery = [w.recovery_s for w in p.windows if w.recovery_s is not None]
    return (head + f"; inside the {len(p.windows)} injected fault window(s) "
            f"{p.in_fault.error_ratio or 0:.2%} ({p.in_fault.failed} of {p.in_fault.attempts}"
            + (f": {caused}" if caused else "") + ")"
            + (f", in recovery {p.recovery.error_ratio:.2%} ({p.recovery.failed} of {p.recovery.attempts})"
               if p.recovery.attempts else "")
            + (f"; recovered in {', '.join(f'{r:.2f} s' for r in recovery)}" if recovery else ""))


def replay_line(summary: LoadSummary) -> str:
    """What a replay offered against its source: turns sent, arrival-time error, sessions replayed as recorded."""
    r = summary.replay
    if r is None:
        return ""
    a, g = r.arrival_error_ms, r.inter_arrival_error_ms
    same = ("every session's turns sent as recorded" if r.sequences_equal
            else f"{len(r.sessions_differing)} session(s) not as recorded: {', '.join(r.sessions_differing[:5])}")
    return (f"replay of {r.source_format} trace {r.source_sha256[:12]} at {r.speed:g}×: {r.turns_sent} of "
            f"{r.turns_planned} turns in {r.sessions} sessions; arrival error p50 {a.p50 or 0:.1f} ms, p99 "
            f"{a.p99 or 0:.1f} ms; inter-arrival error p99 {g.p99 or 0:.1f} ms; {same}")


def _replay(summary: LoadSummary) -> str:
    line = replay_line(summary)
    return f"<p>{escape(line)}</p>" if line else ""


def _phases(summary: LoadSummary) -> str:
    """Errors, ends and T4/T5 apart by cause: steady state, inside the fault windows, recovery after them."""
    p = summary.phases
    if not p.windows:
        return ""

    def cell(stats: PhaseStats, code: str) -> str:
        entry = stats.t_codes.get(code)
        return f"{entry.p95:.0f}" if entry is not None and entry.p95 is not None else "—"

    rows = "".join(
        f"<tr><td>{name}</td><td class=num>{st.attempts}</td><td class=num>{st.failed}</td>"
        f"<td class=num>{(st.error_ratio or 0):.2%}</td><td class=num>{cell(st, 'T4')}</td>"
        f"<td class=num>{cell(st, 'T5')}</td><td>{escape(', '.join(f'{k} {v}' for k, v in sorted(st.end_states.items())))}"
        "</td></tr>" for name, st in (("steady", p.steady), ("in fault windows", p.in_fault), ("recovery", p.recovery)))
    return ("<table><tr><th>phase</th><th>attempts</th><th>failed</th><th>error ratio</th><th>T4 p95 ms</th>"
            f"<th>T5 p95 ms</th><th>ends</th></tr>{rows}</table>")


def _workers(summary: LoadSummary, t0: float) -> str:
    """Each worker as the master saw it: what it sent, and when it was lost or came back."""
    if not summary.worker_nodes:
        return ""

    def at(ms: float | None) -> str:
        return f"+{(ms - t0) / 1000:.1f} s" if ms else ""

    rows = "".join(
        f"<tr><td>{escape(w.worker_id)}</td><td>{escape(w.state)}</td><td class=num>{w.reports}</td>"
        f"<td class=num>{w.rows}</td><td class=num>{w.requests}</td><td>{at(w.lost_ms)}</td>"
        f"<td>{at(w.silent_since_ms)}</td><td>{at(w.returned_ms)}</td></tr>" for w in summary.worker_nodes)
    lost = len(summary.lost_workers)
    return (f"<h3>workers ({lost} lost)</h3><table><tr><th>worker</th><th>state</th><th>reports</th><th>rows</th>"
            f"<th>requests</th><th>lost</th><th>last heard before</th><th>back</th></tr>{rows}</table>")
