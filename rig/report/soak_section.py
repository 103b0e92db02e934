"""A soak run in the report: each resource's slope over the hold (per hour, or per question of a session), its
interval and its call."""

from __future__ import annotations

from rig.report.charts import scatter_with_fit
from rig.report.plain import escape
from rig.results.soak import Environment, SoakAnalysis

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
            f"{rows}</table>" + _machine(soak.environment) + _plots(soak))


def _machine(env: Environment | None) -> str:
    """The machine beside the load: steady, or why a timing or slot drift is unclear."""
    if env is None or env.others_first is None:
        return ""
    said = (f"other programs took {env.others_first:.2f} cores in the hold's first third and {env.others_last:.2f} "
            f"in its last" + (f"; the machine's {env.cores} cores were {100 * env.in_use_share:.0f} % in use"
                              if env.in_use_share is not None and env.cores else ""))
    if env.steady:
        return f"<p>The machine was steady: {escape(said)}.</p>"
    return (f"<p style='background:#fff3cd'><b>The machine was not steady</b> ({escape(env.why)}): a drift of a "
            f"timing or of slots held is unclear, not the target's. {escape(said)}.</p>")


def _plots(soak: SoakAnalysis) -> str:
    """Each series with data: its points over the hold (or by question) and the fitted line, red."""
    charts = [scatter_with_fit(s.plot, s.fit, title=f"{s.series}: {s.call}", y_unit=s.unit,
                               x_unit="time in the hold (s)" if s.per == "h" else "question of the session")
              for s in soak.slopes if s.plot]
    return f"<div class='charts-2'>{''.join(f'<div>{c}</div>' for c in charts)}</div>" if charts else ""
