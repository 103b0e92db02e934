"""`rig selftest`: the gate against the clean workbench and against each seeded defect.

A rig is only as good as the failures it catches: each defect must make at least one of the cases
that guard its promise FAIL, and the clean workbench must show no FAIL and no U.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from rig.errors import ConfigError
from rig.gate.session import GateOptions, run_gate
from rig.verdict import Verdict

# Which cases guard the promise each seeded defect breaks.
GUARDS: dict[str, list[int]] = {
    "logout_keeps_token": [5], "unauth_run_detail": [2], "cross_user_file": [3], "cross_user_export": [4],
    "silent_parse_failure": [6, 8], "scope_leak": [10, 13], "tool_result_misrouted": [12, 13],
    "fake_tool_success": [14], "empty_answer_completed": [16], "stop_not_propagated": [20],
    "disconnect_cancels": [22], "stale_checkpoint_resumes": [24], "restart_marks_user_stop": [26],
    "summary_drops_originals": [19], "branch_mixing": [18], "citation_page_shift": [27, 28, 30],
    "duplicate_quote_highlighted": [29], "stale_highlight_cache": [31], "removed_source_returns": [32],
    "export_other_session": [33], "truncate_long_input": [36], "model_fallback_silent": [37],
    "api_key_leak": [38], "trace_incomplete_unmarked": [35], "unauth_run_events": [2], "merged_results_swapped": [13],
    "tool_card_masks_error": [14], "export_all_branches": [33], "export_leaks_api_key": [38],
    "run_record_null_state": [1], "search_down_after_corrupt": [9], "hit_page_shift": [7],
    "attachment_unreadable_kept": [11], "expand_error_hidden": [15], "resume_searches_again": [23],
    "resume_without_checkpoint_restarts": [25], "trace_id_unlinked": [34], "relogin_drops_citations": [17],
    "stop_waits_for_stage": [21], "tool_count_inflated": [12], "md_export_page_shift": [33],
    "replay_repeats_last": [22], "foreign_stop": [4], "stop_drops_citations": [20], "late_stop_rewrites": [20],
    "direct_calls_misreported": [13],
    # trust nothing, part 3: two accounts agree, lists complete, "absent" decided per target
    "stream_end_contradicts": [20], "first_token_backdated": [1], "trace_ignores_caller": [1],
    "model_input_drops_history": [18], "model_input_unlisted_results": [12], "direct_call_unspanned": [1, 13],
    "foreign_project_hits_unpaged": [30], "estimate_shown_as_actual": [34], "actual_cost_from_estimate": [34],
}
# One defect per reliability module: the subset CI runs.
REPRESENTATIVE = ["logout_keeps_token", "silent_parse_failure", "fake_tool_success", "branch_mixing",
                  "stop_not_propagated", "citation_page_shift", "export_other_session", "trace_incomplete_unmarked",
                  "truncate_long_input", "api_key_leak"]


class DefectRow(BaseModel):
    defect: str
    verdicts: dict[int, str]
    caught: bool
    run_dir: str


class SelftestReport(BaseModel):
    clean: dict[int, str] = Field(default_factory=dict)
    clean_problems: list[str] = Field(default_factory=list)
    coverage_never: list[str] = Field(default_factory=list)  # contract cells the clean gate never exercised
    defects: list[DefectRow] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.clean_problems and not self.coverage_never and all(d.caught for d in self.defects)


def run_selftest(defects: list[str] | None, out: Path, console: Console | None = None,
                 clean_cases: list[int] | None = None) -> SelftestReport:
    """Run the clean gate (all cases, or `clean_cases`) and one gate per defect on its guarding cases."""
    names = defects or list(GUARDS)
    unknown = [d for d in names if d not in GUARDS]
    if unknown:

        raise ConfigError(f"unknown defect(s) {unknown}", fix="see python -m workbench defects")
    report = SelftestReport()
    clean = run_gate(GateOptions(out=out / "clean", cases=clean_cases))
    report.clean = {c.case_id: c.verdict.value for c in clean.data.cases}
    report.clean_problems = [f"case {c.case_id} {c.verdict.value}: {c.reason}" for c in clean.data.cases
                             if c.verdict in (Verdict.FAIL, Verdict.U)]
    if clean_cases is None and clean.data.coverage is not None:  # the whole gate: every contract cell reached
        report.coverage_never = list(clean.data.coverage.never)
    for defect in names:
        result = run_gate(GateOptions(out=out / defect, cases=GUARDS[defect], defects=[defect]))
        verdicts = {c.case_id: c.verdict.value for c in result.data.cases}
        caught = any(v == Verdict.FAIL.value for v in verdicts.values())
        report.defects.append(DefectRow(defect=defect, verdicts=verdicts, caught=caught, run_dir=str(result.run_dir)))
        if console:
            console.print(f"  {defect}: {'caught' if caught else '[red]NOT caught[/]'} {verdicts}")
    if console:
        print_matrix(report, console)
    return report


def print_matrix(report: SelftestReport, console: Console) -> None:
    table = Table("defect", "guarding cases → verdict (clean build)", "caught",
                  title="detection matrix (defect × case verdict)")
    for d in report.defects:
        cells = "  ".join(f"{c}: {'[red]' + v + '[/]' if v == 'FAIL' else v} ({report.clean.get(c, '-')})"
                          for c, v in sorted(d.verdicts.items()))
        table.add_row(d.defect, cells, "[green]yes[/]" if d.caught else "[red]NO[/]")
    console.print(table)
    if report.coverage_never:
        console.print("[red]contract cells the clean gate never exercised:[/] " + ", ".join(report.coverage_never))
    if report.clean_problems:
        console.print("[red]clean workbench problems:[/] " + "; ".join(report.clean_problems))
    else:
        console.print(f"clean workbench: {len(report.clean)} case(s), no FAIL or U")
