"""A report's charts, drawn by matplotlib as inline SVG: self-contained pages that read the same in any browser.

Each chart has units on both axes, plain numbers (never `8.43e+03`), its legend outside the plot, and the page's
width. What a run lived through is shaded and named in the legend by kind — the windows of injected faults, the
stages of a load's shape, a capacity search's judged steps, the seconds the load generator itself was past its
limits — so a fault window is never mistaken for a load stage. `windows` buckets samples into per-window rates or
percentiles for the curves.
"""

from __future__ import annotations

import io
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from rig.report.plain import escape
from rig.stats import percentile

PALETTE = ["#1f6feb", "#d1242f", "#1a7f37", "#8250df", "#bc4c00", "#0a7c86"]
BandKind = Literal["fault", "stage", "step", "client"]
@dataclass(frozen=True)
class BandStyle:
    """How a kind of band is drawn, and its one legend entry."""

    label: str
    color: str
    alpha: float


BAND_STYLE: dict[BandKind, BandStyle] = {
    "fault": BandStyle("injected fault window", "#fb8f44", 0.30),
    "stage": BandStyle("load stage begins", "#0969da", 0.9),
    "step": BandStyle("capacity step (judged window)", "#4ac26b", 0.18),
    "client": BandStyle("load generator past its limits", "#6e7781", 0.25),
}
WIDTH_IN, HEIGHT_IN = 14.0, 3.2  # a page's width at 96 px per inch; a half chart is half as wide
FONTS = ("DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC")  # those installed, in this order (CJK after Latin)
NAMED_BANDS = 12  # at most this many bands carry their own label on the plot; more are named by the legend only


@dataclass(frozen=True)
class Band:
    """A stretch of the x axis a run lived through: `kind` decides its colour and legend entry; `label` names it."""

    start: float
    end: float
    label: str
    kind: BandKind = "fault"


@dataclass(frozen=True)
class Mark:
    """A vertical line at `x` with its label (a capacity search's knee)."""

    x: float
    label: str


def line_chart(series: dict[str, list[tuple[float, float]]], *, title: str, unit: str = "",
               x_label: str = "time since the run began (s)", bands: list[Band] | None = None,
               x_range: tuple[float, float] | None = None, marks: list[Mark] | None = None) -> str:
    """Lines over a shared x axis; `unit` labels the y axis; `bands` shade what the run lived through; `x_range`
    fixes the axis so several charts of one run line up."""
    if not any(series.values()):
        return f"<p class=muted>{escape(title)}: no data</p>"
    plt, ticker = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
    try:
        for i, (name, pts) in enumerate(series.items()):
            if pts:
                xs, ys = zip(*sorted(pts), strict=True)
                ax.plot(xs, ys, color=PALETTE[i % len(PALETTE)], linewidth=1.6, label=name,
                        marker="o" if len(pts) <= 20 else None, markersize=3)
        if x_range is not None:
            ax.set_xlim(*x_range)
        _bands(ax, bands or [])
        for m in marks or []:
            ax.axvline(m.x, color="#24292f", linestyle="--", linewidth=1.2, label=m.label)
        _axes(ax, ticker, title=title, x_label=x_label, y_label=unit.strip() or "count")
        return _svg(fig, plt)
    finally:
        plt.close(fig)


def scatter_with_fit(points: list[tuple[float, float]], fit: list[tuple[float, float]], *, title: str,
                     x_unit: str, y_unit: str) -> str:
    """Points and the straight line fitted through them (a soak's slope)."""
    if not points:
        return f"<p class=muted>{escape(title)}: no data</p>"
    plt, ticker = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN / 2, HEIGHT_IN))
    try:
        xs, ys = zip(*points, strict=True)
        ax.scatter(xs, ys, s=6, color=PALETTE[0], alpha=0.6, label="samples")
        if len(fit) == 2:
            (a, b), (c, d) = fit
            ax.plot([a, c], [b, d], color=PALETTE[1], linewidth=2, label="fitted slope")
        _axes(ax, ticker, title=title, x_label=x_unit, y_label=y_unit)
        return _svg(fig, plt)
    finally:
        plt.close(fig)


def ecdf_chart(base: list[float], new: list[float], *, title: str, unit: str,
               marks: list[tuple[str, float | None, float | None]] | None = None) -> str:
    """Two runs' empirical CDFs on one axis; each flagged percentile a line from the base's value to the new's."""
    if not base and not new:
        return f"<p class=muted>{escape(title)}: no samples</p>"
    plt, ticker = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN / 2, HEIGHT_IN))
    try:
        for i, (name, data) in enumerate((("base", base), ("new", new))):
            if data:
                ordered = sorted(data)
                ax.step(ordered, [(k + 1) / len(ordered) for k in range(len(ordered))], where="post",
                        color=("#8a8f98", PALETTE[0])[i], linewidth=1.6, label=f"{name} (n {len(ordered)})")
        for stat, b, n in marks or []:
            if b is not None and n is not None:
                p = float(stat[1:]) / 100
                ax.annotate("", xy=(n, p), xytext=(b, p), arrowprops={"arrowstyle": "->", "color": PALETTE[1]})
                ax.text(n, p, f" {stat}", color=PALETTE[1], fontsize=8, va="bottom")
        _axes(ax, ticker, title=title, x_label=unit, y_label="share of samples at or below")
        return _svg(fig, plt)
    finally:
        plt.close(fig)


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


def plain_number(value: float, _pos: object = None) -> str:
    """A tick label as people write it: `8,430`, `12.5`, `0.004` — never scientific notation."""
    if value == 0:
        return "0"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 1:
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _plain_formatter(ticker: Any) -> Any:
    """Tick labels as plain numbers with as many decimals as the ticks' spacing needs (0.02, 0.04 … not 0, 0 …)."""

    class Plain(ticker.Formatter):
        ticks: list[float] = []

        def set_locs(self, locs: list[float]) -> None:
            self.ticks = sorted(locs)

        def __call__(self, value: float, pos: object = None) -> str:
            locs = self.ticks
            step = min((b - a for a, b in zip(locs, locs[1:], strict=False) if b > a), default=0.0)
            if step and step < 1:
                decimals = min(12, max(0, -math.floor(math.log10(step))))
                return f"{value:,.{decimals}f}"
            return plain_number(value)

    return Plain()


def _pyplot() -> tuple[Any, Any]:
    """matplotlib's pyplot on the file-only Agg backend, with fonts that carry Chinese text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager, ticker

    installed = {f.name for f in font_manager.fontManager.ttflist}
    families = [f for f in FONTS if f in installed] or ["sans-serif"]
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": uuid.uuid4().hex, "font.size": 9,
                         "axes.titlesize": 10, "font.family": families})
    return plt, ticker


def _bands(ax: Any, bands: list[Band]) -> None:
    """Shade each band; one legend entry per kind; name the first few on the plot itself."""
    shown: set[str] = set()
    for i, b in enumerate(sorted(bands, key=lambda b: b.start)):
        style = BAND_STYLE[b.kind]
        label = None if b.kind in shown else style.label
        if b.kind == "stage":  # stages follow each other over the whole run: a line where each begins
            ax.axvline(b.start, linestyle=":", linewidth=1.2, color=style.color, alpha=style.alpha, label=label)
        else:
            ax.axvspan(b.start, max(b.end, b.start + 1e-6), linewidth=0, label=label, color=style.color,
                       alpha=style.alpha)
        shown.add(b.kind)
        if i < NAMED_BANDS and b.kind != "client":  # fault windows and steps named at the top, stages at the foot
            top = b.kind != "stage"
            ax.annotate(b.label, xy=(b.start, 1.0 if top else 0.0), xycoords=("data", "axes fraction"),
                        xytext=(2, -2 if top else 2), textcoords="offset points", fontsize=7,
                        va="top" if top else "bottom", color="#24292f", clip_on=True)


def _axes(ax: Any, ticker: Any, *, title: str, x_label: str, y_label: str) -> None:
    ax.set_title(title, loc="left")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if ax.get_ylim()[0] >= 0:
        ax.set_ylim(bottom=0)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_plain_formatter(ticker))
    ax.grid(True, color="#eaeef2", linewidth=0.8)
    ax.spines[["top", "right"]].set_visible(False)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)


def _svg(fig: Any, plt: Any) -> str:
    """The figure as inline SVG that takes the page's width (its own size kept as the view box)."""
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    text = text[text.index("<svg"):]
    natural = round(fig.get_figwidth() * 96)  # never drawn wider than it was made: its text keeps one size
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                  rf'<svg\1 width="100%" class="chart" style="max-width:{natural}px"', text, count=1)
