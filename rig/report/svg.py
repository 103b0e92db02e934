"""Small inline SVG charts for the HTML report (no plotting library needed)."""

from __future__ import annotations

from rig.report.plain import escape
from rig.stats import percentile

PALETTE = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#57606a")


def line_chart(series: dict[str, list[tuple[float, float]]], *, title: str, unit: str = "", width: int = 640,
               height: int = 180, bands: list[tuple[float, float, str]] | None = None,
               x_range: tuple[float, float] | None = None) -> str:
    """Lines over a shared x axis (seconds); `bands` shade windows (e.g. chaos faults).

    `x_range` fixes the axis, so several charts of one run line up with each other and with their bands;
    without it the axis spans the points.
    """
    points = [p for pts in series.values() for p in pts]
    if not points:
        return f"<p class=muted>{escape(title)}: no data</p>"
    x0 = x_range[0] if x_range else min(p[0] for p in points)
    x1 = max(x_range[1] if x_range else max(p[0] for p in points), x0 + 1e-9)
    y1 = max(max(p[1] for p in points), 1e-9) * 1.1
    pad_l, pad_b, pad_t = 48, 22, 20
    w, h = width - pad_l - 8, height - pad_b - pad_t

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * w

    def sy(y: float) -> float:
        return pad_t + h - y / y1 * h

    parts = [f'<svg width="{width}" height="{height}" role="img" style="border:1px solid #d0d7de;background:#fff">',
             f'<text x="{pad_l}" y="14" font-size="12" font-weight="600">{escape(title)}</text>']
    for start, end, label in bands or []:
        if end >= x0 and start <= x1:
            a, b = sx(max(start, x0)), sx(min(end, x1))
            parts.append(f'<rect x="{a:.1f}" y="{pad_t}" width="{max(b - a, 1):.1f}" height="{h}" fill="#ffd8b5" '
                         f'opacity="0.6"><title>{escape(label)}</title></rect>')
    for frac in (0, 0.5, 1):
        y = pad_t + h - frac * h
        parts.append(f'<line x1="{pad_l}" x2="{pad_l + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>'
                     f'<text x="2" y="{y + 4:.1f}" font-size="10">{frac * y1:.3g}{escape(unit)}</text>')
    parts.append(f'<text x="{pad_l}" y="{height - 4}" font-size="10">0 s</text>'
                 f'<text x="{pad_l + w - 30}" y="{height - 4}" font-size="10">{(x1 - x0):.0f} s</text>')
    for i, (name, pts) in enumerate(series.items()):
        if not pts:
            continue
        colour = PALETTE[i % len(PALETTE)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(pts))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>')
        parts.append(f'<text x="{pad_l + 40 + 120 * i}" y="{height - 4}" font-size="10" fill="{colour}">'
                     f'{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def windows(points: list[tuple[float, float]], width_s: float, stat: str = "count",
            span: tuple[float, float] | None = None) -> list[tuple[float, float]]:
    """Bucket (t_seconds, value) points into windows: per-second count, or p95 of the values. With `span`, a count
    or rate has a value for every window in it, zero where nothing happened (so a line never joins two bursts
    across a quiet stretch)."""
    buckets: dict[int, list[float]] = {}
    for t, v in points:
        buckets.setdefault(int(t // width_s), []).append(v)
    keys = set(buckets)
    if span is not None and stat in ("rate", "count"):
        keys |= set(range(int(span[0] // width_s), int(span[1] // width_s) + 1))
    out = []
    for k in sorted(keys):
        vals = buckets.get(k, [])
        value = len(vals) / width_s if stat == "rate" else (percentile(vals, 95) or 0) if stat == "p95" else len(vals)
        out.append((k * width_s + width_s / 2, float(value)))
    return out


def scatter_with_fit(points: list[tuple[float, float]], fit: list[tuple[float, float]], *, title: str,
                     x_unit: str, y_unit: str, width: int = 320, height: int = 160) -> str:
    """Points and the straight line fitted through them (a soak's slope), on axes that span both."""
    if not points:
        return f"<p class=muted>{escape(title)}: no data</p>"
    xs = [x for x, _ in points + fit]
    ys = [y for _, y in points + fit]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1e-9)
    y0, y1 = min(min(ys), 0.0), max(max(ys), 1e-9) * 1.05
    pad_l, pad_b, pad_t = 48, 22, 20
    w, h = width - pad_l - 8, height - pad_b - pad_t

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * w

    def sy(y: float) -> float:
        return pad_t + h - (y - y0) / (y1 - y0) * h

    parts = [f'<svg width="{width}" height="{height}" role="img" style="border:1px solid #d0d7de;background:#fff">',
             f'<text x="{pad_l}" y="14" font-size="12" font-weight="600">{escape(title)}</text>',
             f'<text x="2" y="{pad_t + 8}" font-size="10">{y1:.4g} {escape(y_unit)}</text>',
             f'<text x="2" y="{pad_t + h}" font-size="10">{y0:.4g}</text>',
             f'<text x="{pad_l}" y="{height - 4}" font-size="10">{x0:.4g} {escape(x_unit)}</text>',
             f'<text x="{pad_l + w - 60}" y="{height - 4}" font-size="10">{x1:.4g} {escape(x_unit)}</text>']
    parts += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="1.6" fill="{PALETTE[0]}" opacity="0.6"/>'
              for x, y in points]
    if len(fit) == 2:
        (a, b), (c, d) = fit
        parts.append(f'<line x1="{sx(a):.1f}" y1="{sy(b):.1f}" x2="{sx(c):.1f}" y2="{sy(d):.1f}" '
                     f'stroke="{PALETTE[1]}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)
