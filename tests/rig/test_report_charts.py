"""The report's charts, read as a person sees them: rendered in headless Chromium and screenshotted. Units on both
axes, plain numbers (no `8.43e+03`, no `1.1e-09`), each legend outside its plot, fault windows, load stages and the
load generator's own bad seconds told apart in the legend, and charts as wide as the page."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from rig.report.charts import Band, Mark, ecdf_chart, line_chart, plain_number, scatter_with_fit
from rig.report.html import CSS

PAGE_WIDTH = 1400


def _page() -> str:
    t = [float(s) for s in range(0, 120, 2)]
    bands = [Band(20, 35, "fault: restart", "fault"), Band(0, 60, "stage 1: 0→10 users", "stage"),
             Band(60, 120, "stage 2: 10→10 users", "stage"), Band(70, 74, "load generator past its limits", "client")]
    charts = [
        line_chart({"T4 p95": [(x, 8430.0 + 10 * x) for x in t], "T5 p95": [(x, 12000.0 + x) for x in t]},
                   title="latency (5 s windows)", unit="ms", bands=bands, x_range=(0, 120)),
        line_chart({"error ratio": [(x, 1.1e-09 * (1 + x)) for x in t]}, title="error ratio", unit="%", bands=bands),
        line_chart({"runs completed/s": [(u, 0.5 * u) for u in (1, 2, 4, 8, 16)]}, title="throughput against "
                   "offered load", unit="runs/s", x_label="offered load (users)", marks=[Mark(8, "holds: 8 users")]),
        ecdf_chart([100.0 + i for i in range(50)], [120.0 + i for i in range(50)], title="T4 (client)", unit="ms",
                   marks=[("p95", 147.0, 167.0)]),
        scatter_with_fit([(x, 200 + x) for x in t], [(0, 200), (118, 318)], title="target memory: drifts",
                         x_unit="time in the hold (s)", y_unit="MB"),
    ]
    return (f"<!doctype html><html><head><meta charset=utf-8><style>{CSS}</style></head><body>"
            + "".join(f"<div>{c}</div>" for c in charts) + "</body></html>")


MEASURE = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
  const box = e => e ? e.getBoundingClientRect() : null;
  const legend = box(svg.querySelector('g[id^="legend"]'));
  const plot = box(svg.querySelector('g[id^="axes"] > g[id^="patch"]'));
  return {width: svg.getBoundingClientRect().width, body: document.body.getBoundingClientRect().width,
          legend: legend && {left: legend.left, right: legend.right, top: legend.top, bottom: legend.bottom},
          plot: plot && {left: plot.left, right: plot.right, top: plot.top, bottom: plot.bottom},
          legendText: [...svg.querySelectorAll('g[id^="legend"] text')].map(t => t.textContent),
          texts: [...svg.querySelectorAll('text')].map(t => t.textContent)};
})"""


async def _render(html: Path, shot: Path) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    from rig.browser.launch import launch_chromium

    async with async_playwright() as p:
        browser = await launch_chromium(p)
        try:
            page = await browser.new_page(viewport={"width": PAGE_WIDTH, "height": 900})
            await page.goto(html.as_uri())
            await page.screenshot(path=str(shot), full_page=True)
            found: list[dict[str, Any]] = await page.evaluate(MEASURE)
            return found
        finally:
            await browser.close()


def test_the_charts_read_as_a_person_sees_them(tmp_path: Path) -> None:
    html = tmp_path / "charts.html"
    html.write_text(_page(), encoding="utf-8")
    charts = asyncio.run(_render(html, tmp_path / "charts.png"))
    assert len(charts) == 5 and (tmp_path / "charts.png").stat().st_size > 10_000
    for c in charts:
        assert c["width"] >= 0.45 * c["body"], c["width"]  # as wide as the page (half of it, two to a row)
        assert c["legend"] and c["plot"] and c["legend"]["left"] >= c["plot"]["right"] - 1, "legend outside the plot"
        assert not [t for t in c["texts"] if re.search(r"\de[+-]\d|×10", t)], "no scientific notation"
    latency, errors, capacity = charts[0], charts[1], charts[2]
    assert {"injected fault window", "load stage begins", "load generator past its limits"} <= set(latency["legendText"])
    assert "ms" in latency["texts"] and "time since the run began (s)" in latency["texts"]
    assert {"8,000", "10,000", "12,000"} <= set(latency["texts"])  # thousands as people write them
    assert "%" in errors["texts"] and "0.00000004" in errors["texts"]  # a tiny ratio keeps its digits, plainly
    assert "offered load (users)" in capacity["texts"] and "holds: 8 users" in capacity["legendText"]


def test_tick_labels_are_plain_numbers() -> None:
    assert [plain_number(v) for v in (8430.0, 12.5, 1.0, 0.004, 1.1e-09, 0.0)] == [
        "8,430", "12.5", "1", "0.004", "0", "0"]
