"""`rig ask`: the embedded default in one question — corpus, workbench, two accounts, one streamed answer."""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.adapters.models import CitationEvent, TokenEvent
from rig.cli.console import console, fail, progress_bar
from rig.clock import now_ns
from rig.corpus_load import load_corpus
from rig.errors import RigError
from rig.fixtures import CorpusManifest, ensure_corpus
from rig.measure.derive import run_measures
from rig.measure.transcript import RunTranscript
from rig.redact import Redactor
from rig.target.open import connect
from rig.target.session import Connection

DEMO_QUESTION = "请概括《Reputation and Regulations- Evidence from eBay》的主要发现"


def ask(
    question: Annotated[str, typer.Option(help="The question to ask over SSE.")] = DEMO_QUESTION,
    paper: Annotated[str, typer.Option(help="Paper id the session is scoped to.")] = "P32",
    keep: Annotated[bool, typer.Option(help="Leave the workbench running after the demo.")] = False,
    data: Annotated[Path | None, typer.Option(help="Workbench data directory (default: temporary).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run (its events, record and timings) as JSON "
                                           "on stdout; the tour goes to stderr.")] = False,
) -> None:
    """Build fixtures, start the workbench, seed accounts A and B, upload the corpus, stream one answer."""
    if json_out:
        with contextlib.redirect_stdout(sys.stderr):  # the tour (rich writes to the current stdout) to stderr
            run = _ask(question, paper, keep=False, data=data)
        print(run.model_dump_json(indent=2))
        return
    _ask(question, paper, keep=keep, data=data)


def _ask(question: str, paper: str, *, keep: bool, data: Path | None) -> RunTranscript:
    """The tour; returns the run it streamed."""


    try:
        began = time.monotonic()
        corpus_dir, manifest = ensure_corpus(progress=lambda name: console.print(f"  rendered {Path(name).name}",
                                                                                  style="dim"))
        console.print(f"[bold]corpus[/] {corpus_dir} ({len(manifest.files)} files, {time.monotonic() - began:.1f}s)")
        with tempfile.TemporaryDirectory(prefix="rig-ask-") as tmp:
            conn = connect(None, data or Path(tmp), Redactor(), accounts={"a": "researcher-a", "b": "researcher-b"})
            try:
                run = _tour(conn, corpus_dir, manifest, question, paper)
                if keep:
                    console.print(f"workbench left running at {conn.adapter.base_url}; press Ctrl-C to stop")
                    while True:
                        time.sleep(3600)
            finally:
                conn.close()
    except RigError as exc:
        raise fail(exc) from None
    return run


def _tour(conn: Connection, corpus_dir: Path, manifest: CorpusManifest, question: str, paper: str
          ) -> RunTranscript:
    target, adapter = conn.embedded, conn.adapter
    assert target is not None
    console.print(f"[bold]workbench[/] {adapter.base_url} (pid {target.pid}, data {target.data_dir})")
    auth = conn.login("a")
    project = adapter.create_project(auth, "demo library")
    with progress_bar("uploading", len(manifest.corpus)) as advance:
        loaded = load_corpus(adapter, auth, project, corpus_dir, manifest, progress=lambda n: advance(Path(n).name[:40]))
    statuses: dict[str, int] = {}
    for f in loaded.files:
        status = f.document.status if f.document else "timeout"
        statuses[status] = statuses.get(status, 0) + 1
    t1 = sorted(f.t1_ms for f in loaded.files if f.t1_ms is not None)
    console.print(f"[bold]ingest[/] {statuses}; T1 median {t1[len(t1) // 2]:.0f} ms, max {t1[-1]:.0f} ms")
    opened = adapter.open_session(auth, project, [loaded.doc(paper)])
    console.print(f"[bold]question[/] ({paper}) {question}\n")
    submitted = adapter.ask(auth, opened.session_id, question)
    run = RunTranscript(run_id=submitted.run_id, session_id=opened.session_id, question=question,
                        submit_ns=submitted.submit_ns)
    for event in adapter.events(auth, submitted.run_id):
        run.events.append(event)
        if isinstance(event, TokenEvent) and event.kind == "answer":
            console.print(event.text, end="", markup=False, highlight=False)
    run.end_ns = now_ns()
    console.print("\n")
    _print_citations([e for e in run.events if isinstance(e, CitationEvent)])
    run.detail = adapter.run(auth, submitted.run_id)
    _print_run(run)
    return run


def _print_citations(citations: list[CitationEvent]) -> None:
    table = Table("marker", "paper", "page", "quote", title="citations")
    for c in citations:
        table.add_row(str(c.data.get("marker")), str(c.data.get("paper_id")),
                      "file" if c.page is None else str(c.page), str(c.data.get("quote", ""))[:80])
    console.print(table)


def _print_run(run: RunTranscript) -> None:
    detail = run.detail
    assert detail is not None
    table = Table("field", "value", title=f"run {detail.run_id}")
    for key in ("state", "end_reason", "trace_id", "rounds", "model_requests", "tool_calls_proposed",
                "tool_calls_executed", "embedding_requests"):
        table.add_row(key, str(getattr(detail, key)))
    table.add_row("usage", detail.usage.model_dump_json())
    table.add_row("cost", detail.cost.model_dump_json())
    table.add_row("model", detail.model.model_dump_json())
    console.print(table)
    codes = Table("code", "source", "label", "value", title="T-codes of this run (rig.measure)")
    for m in run_measures(run):
        codes.add_row(m.code, m.source, m.label or "", f"{m.value:g} {m.unit}")
    console.print(codes)
    stages = Table("stage", "round", "ms", "ok", title="stages (server)")
    for s in detail.stages:
        start, end = s.started_at_ms, s.ended_at_ms
        stages.add_row(s.name, str(getattr(s, "round", "") or ""), f"{end - start:.1f}" if start and end else "-",
                       str(s.ok))
    console.print(stages)
