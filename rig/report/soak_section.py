"""A soak run in the report: each resource's slope over the hold (per hour, or per question of a session), its
interval and its call."""

from __future__ import annotations

from rig.report.charts import scatter_with_fit
from rig.report.plain import escape
from rig.results.soak import SoakAnalysis

COLOURS = {"drifts": "#f8d7da", "flat": "#d4edda", "unclear": "#fff3cd", "no data": "#eee"}


def soak_html(soak: SoakAnalysis) -> str:
    rows = "".join(
        f"<tr style='background:{COLOURS[s.call]}'><td>{escape(s.series)}</td><td>{escape(s.key)}</td>"
        f"<td class=num>{s.points}</td><td class=num>{'—' if s.slope is None else f'{s.slope:.4g}'} "
        f"{escape(s.unit)}/{s.per}</td>"
        f"<td class=num>{'—' if s.low is None else f'{s.low:.4g} – {s.high:.4g}'}</td>"
        f"<td class=num>{s.bound:g} {escape(s.unit)}/{s.per}</td><td><b>{escape(s.call)}</b> {escape(s.why)}</td></tr>"
        for s in soak.slopes)
    return (f"<p>Slopes over the {soak.hold_s:.0f} s hold after a {soak.warmup_s:.0f} s warm-up, per hour (per "
            "question of a session for T4 against the session's length; least squares, 90 % pairs-bootstrap "
            "interval). A series drifts when its whole interval lies past the bound (the memory, file and slot "
            "series are in the load charts above).</p><table><tr><th>series</th>"
            "<th>policy key</th><th>points</th><th>slope</th><th>interval</th><th>bound</th><th>call</th></tr>"
            f"{rows}</table>" + _plots(soak))


def _plots(soak: SoakAnalysis) -> str:
    """Each series with data: its points over the hold (or by question) and the fitted line, red."""
    charts = [scatter_with_fit(s.plot, s.fit, title=f"{s.series}: {s.call}", y_unit=s.unit,
                               x_unit="time in the hold (s)" if s.per == "h" else "question of the session")
              for s in soak.slopes if s.plot]
    return f"<div class='charts-2'>{''.join(f'<div>{c}</div>' for c in charts)}</div>" if charts else ""
