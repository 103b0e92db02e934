"""The chaos part of a load report: one row per fault window, then restarts in detail, then the hypothesis."""

from __future__ import annotations

from rig.evidence import EvidenceStore
from rig.report.charts import Band
from rig.report.plain import escape
from rig.results.chaos import ChaosAnalysis, Window


def chaos_bands(store: EvidenceStore) -> list[Band]:
    """Each chaos window in a load run's store (epoch ms, named by its step), for shading the load curves."""
    windows = [Window.model_validate(e.data) for e in store.evidence(kind="chaos_window")]
    return [Band(w.started_ms, max(w.ended_ms, w.started_ms + 500), f"fault: {w.step}", "fault") for w in windows
            if w.started_ms and w.ended_ms]


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:+.0f}" if abs(v) >= 1 else f"{v:+.1f}"


def _counts(d: dict[str, int] | None) -> str:
    return ", ".join(f"{escape(str(k))}: {v}" for k, v in (d or {}).items()) or "—"


def chaos_section(chaos: ChaosAnalysis) -> str:
    if not chaos.windows:
        return "<p>no chaos window was opened</p>"
    rows = []
    for w in chaos.windows:
        t4, t5 = w.T4_shift_ms, w.T5_shift_ms
        rec = "—" if w.recovery_s is None else f"{w.recovery_s:.2f} s"
        rows.append(
            f"<tr><td>{escape(w.step)}</td><td>{escape(w.fault)}</td><td class=num>{w.seconds:.2f}</td>"
            f"<td class=num>{w.runs_in_flight}</td><td>{_counts(w.ends_in_window)}</td>"
            f"<td>{_counts(w.errors_in_window)}</td>"
            f"<td class=num>{_ms(t4.delta.p50)} / {_ms(t4.delta.p95)} (n={t4.window.n})</td>"
            f"<td class=num>{_ms(t5.delta.p50)} / {_ms(t5.delta.p95)} (n={t5.window.n})</td>"
            f"<td class=num>{rec}</td><td>{escape(w.error or '')}</td></tr>")
    html = ["<p>Shifts are against the runs that ended before the first fault "
            f"({chaos.baseline_runs} runs). Recovery: first completed run after the window "
            "(after a restart: from the kill).</p>",
            "<table><tr><th>step</th><th>fault</th><th>s</th><th>runs in flight</th><th>their ends</th>"
            "<th>errors inside</th><th>T4 Δ p50/p95 ms</th><th>T5 Δ p50/p95 ms</th><th>recovery</th><th>problem</th></tr>",
            *rows, "</table>"]
    for w in chaos.windows:
        if w.via != "restart":
            continue
        c = w.committed
        committed = "—" if c is None else (f"{c.checked}, still there: {c.present if c.present is not None else '—'}, "
                                            f"lost: {c.lost if c.lost is not None else '—'}"
                                            + (f" — {escape(c.error)}" if c.error else ""))
        resumed = "".join(f"<li>{escape(r.origin)} → {escape(r.run)} ({escape(str(r.end))})</li>" for r in w.resumed)
        html.append(
            f"<h3>restart {escape(w.step)}</h3><ul>"
            f"<li>ready after {w.ready_s} s; first good run {w.recovery_s} s after the kill "
            f"({escape(str(w.first_good_run))})</li>"
            f"<li>interrupted (marked server_restart): {w.interrupted or 0}; lost (no terminal state): "
            f"{w.lost or 0}; other ends: {_counts(w.other_ends)}</li>"
            f"<li>committed answers before the kill: {committed}</li>"
            f"<li>resumed runs (T9): {len(w.resumed)}<ul>{resumed}</ul></li></ul>")
    for title, probes in chaos.hypothesis.items():
        items = "".join(f"<li>{'ok' if p.ok else 'FAILED'} {escape(p.name)} ({p.ms:.0f} ms) "
                        f"{escape(p.detail)}</li>" for p in probes)
        html.append(f"<h3>steady state {escape(title)}</h3><ul>{items}</ul>")
    return "".join(html)
