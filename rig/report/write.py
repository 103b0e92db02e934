"""Writing every report format into a run directory, and pointing `reports/latest` at it."""

from __future__ import annotations

import os
from pathlib import Path

from rig.report.data import ReportData
from rig.report.html import html_report
from rig.report.junit import junit_xml
from rig.report.markdown import markdown_report
from rig.report.results import gate_results
from rig.results.quality import QualitySummary


def write_reports(run_dir: Path, data: ReportData, quality: QualitySummary | None = None) -> dict[str, Path]:
    """results.json, report.md, junit.xml and report.html, each written whole (temp file, then rename)."""
    outputs = {
        "results.json": gate_results(data, quality).model_dump_json(indent=2) + "\n",
        "report.md": markdown_report(data),
        "junit.xml": junit_xml(data),
        "report.html": html_report(data),
    }
    written = {}
    for name, text in outputs.items():
        path = run_dir / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written[name] = path
    return written


def point_latest(run_dir: Path, reports_root: Path) -> None:
    """`<reports_root>/latest` → this run directory (a relative symlink, replaced atomically) — only for a run
    directly inside the rig's reports folder: a run written elsewhere (`--out`) leaves no link beside it."""
    if run_dir.resolve().parent != reports_root.resolve():
        return
    link = run_dir.parent / "latest"
    tmp = run_dir.parent / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(run_dir.name, tmp)
    tmp.replace(link)
