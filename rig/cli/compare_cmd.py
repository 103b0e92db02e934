"""`rig compare BASE NEW`: did the new run regress against the base run, with statistics that hold."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.console import JsonFlag, console, escape, fail, print_json
from rig.compare.history import History
from rig.compare.model import CompareResult, CompareSettings
from rig.compare.push import push_compare
from rig.compare.report import write_reports
from rig.compare.runs import compare_dirs
from rig.errors import RigError
from rig.load.replay.fidelity import compare_with_source


def compare(
    base: Annotated[Path, typer.Argument(
        help="The base run directory (gate, load, quality or demo), or the trace a replay replayed.")],
    new: Annotated[Path, typer.Argument(help="The new run directory, of the same kind (or the replay's).")],
    out: Annotated[Path | None, typer.Option(help="Where compare.{html,md,json} go (default: NEW/compare).")] = None,
    alpha: Annotated[float, typer.Option(help="Two-sided level: a shift is real when its (1-α) interval excludes 0.")]
    = 0.05,
    min_rel: Annotated[float, typer.Option(help="Smallest shift that matters, relative to the base value.")] = 0.10,
    min_ms: Annotated[float, typer.Option(help="Smallest shift that matters for time codes, in ms.")] = 50.0,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (a comparison is reproducible).")] = 0,
    pushgateway: Annotated[str | None, typer.Option(help="Push the decision and findings to this Pushgateway.")]
    = None,
    json_out: JsonFlag = False,
    anyway: Annotated[bool, typer.Option(
        "--anyway", help="Compare runs whose offered load (users, arrival, rate, think time, mix, shape, answer "
        "budget), chaos schedule or policy differ; each difference is stated as a caveat.")] = False,
) -> None:
    """Compare two runs: comparability first, then verdict changes, T-code shifts with bootstrap intervals,
    error and end-reason rates, tokens and cost, and throughput at equal offered load.

    Exit 0 no regression, 1 regressed (a verdict got worse, or a T-code or rate regressed), 2 not comparable
    (different kind, eval set or corpus; or, unless --anyway, a different offered load, chaos schedule or policy) or
    unreadable. A comparison that is not comparable writes nothing unless --out names where.

    With a trace file as BASE and a `rig load --replay` run as NEW, it reports the offered load's fidelity to
    its source instead: the arrival-time error and every session's turns in order (exit 0 faithful, 1 not, 2 not
    the file that run replayed).
    """
    if base.is_file():
        _replay_fidelity(base, new, out)
        return

    settings = CompareSettings(alpha=alpha, min_rel=min_rel, min_abs_ms=min_ms, seed=seed, anyway=anyway)
    try:
        result = compare_dirs(base, new, settings)
    except RigError as exc:
        raise fail(exc) from None
    exit_code = {"no regression": 0, "regressed": 1, "not comparable": 2}[result.decision]
    if json_out:
        if result.decision != "not comparable" or out is not None:
            write_reports(result, out or new / "compare")
        print_json(result)
        raise typer.Exit(exit_code)
    if result.decision == "not comparable" and out is None:  # nothing written into a run it could not compare
        console.print("decision: [bold]not comparable[/] — " + escape("; ".join(result.reasons[:8])))
        console.print("nothing written (pass --out DIR to keep the comparison; --anyway to compare a different "
                      "offered load, chaos schedule or policy with caveats)")
        raise typer.Exit(2)
    paths = write_reports(result, out or new / "compare")
    if pushgateway:

        try:
            push_compare(pushgateway, result, new.resolve().name)
        except RigError as exc:
            raise fail(exc) from None
    _print_parts(result)
    console.print(f"decision: [bold]{result.decision}[/] — " + escape("; ".join(result.reasons[:6])))
    console.print(f"reports: {paths[2]} (also compare.md, compare.json)")
    raise typer.Exit({"no regression": 0, "regressed": 1, "not comparable": 2}[result.decision])


def _print_parts(result: CompareResult) -> None:
    """Each part's T-code shifts as a table, then its verdict changes."""
    for part in result.parts:
        table = Table("T-code", "source", "n", *[f"{s} base→new (call)" for s in ("p50", "p95", "p99")],
                      title=f"{part.part}: T-codes")
        for t in part.tcodes:
            table.add_row(t.code, t.source, f"{t.n_base}/{t.n_new}", *[
                f"{s.base or 0:.0f}→{s.new or 0:.0f} {t.unit} ({s.call})" if s.base is not None else s.call
                for s in t.shifts])
        console.print(table)
        for v in part.verdict_changes:
            console.print(f"  {escape(v.case)}{' / ' + escape(v.item) if v.item else ''}: {v.base} → {v.new}"
                          + (" [red](worse)[/]" if v.worse else ""))


def _replay_fidelity(trace: Path, run_dir: Path, out: Path | None) -> None:

    try:
        check = compare_with_source(trace, run_dir)
    except RigError as exc:
        raise fail(exc) from None
    target = out or run_dir / "compare"
    target.mkdir(parents=True, exist_ok=True)
    (target / "fidelity.json").write_text(check.model_dump_json(indent=2) + "\n", encoding="utf-8")
    console.print(f"decision: [bold]{check.decision}[/] — " + escape("; ".join(check.reasons)))
    console.print(f"report: {target / 'fidelity.json'}")
    raise typer.Exit({"faithful": 0, "not faithful": 1, "not comparable": 2}[check.decision])


def history(
    kind: Annotated[str | None, typer.Option(help="Only runs of this kind (gate, load, quality).")] = None,
    target: Annotated[str | None, typer.Option(help="Only runs of this target (a URL, or `embedded`).")] = None,
    codes: Annotated[str, typer.Option(help="Headlines to show, comma-separated (e.g. T4.p95,T5.p50).")]
    = "T4.p95,T5.p95",
    reports_root: Annotated[Path, typer.Option(help="The reports folder holding history.sqlite3.")] = Path("reports"),
    json_out: JsonFlag = False,
) -> None:
    """List earlier runs by kind, target and version, with the trend of the chosen T-code headlines."""

    rows = History(reports_root).rows(kind, target)
    if json_out:
        print_json(list(rows))
        raise typer.Exit(0)
    if not rows:
        console.print(f"no runs recorded in {reports_root}/history.sqlite3"
                      + (f" of kind {kind}" if kind else "") + (f" on {target}" if target else ""))
        raise typer.Exit(0)
    wanted = [c.strip() for c in codes.split(",") if c.strip()]
    table = Table("started", "kind", "target", "version", "decision", *wanted, "run", title="run history")
    for r in rows:
        table.add_row(r.started_at or "", r.kind, r.target, r.target_version or "", r.decision,
                      *[f"{r.headlines[c]:.0f}" if r.headlines.get(c) is not None else "—" for c in wanted],
                      Path(r.run_dir).name)
    console.print(table)
