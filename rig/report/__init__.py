"""Reports rendered from the evidence store: HTML, Markdown, JSON and JUnit XML."""

from rig.report.data import ReportData, build_report_data
from rig.report.write import write_reports

__all__ = ["ReportData", "build_report_data", "write_reports"]
