"""`rig ask`: the embedded default in one question — corpus, workbench, two accounts, one streamed answer."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rig.adapters.models import CitationEvent, TokenEvent
from rig.cli.console import console, fail, progress_bar
from rig.errors import RigError

DEMO_QUESTION = "请概括《Reputation and Regulations- Evidence from eBay》的主要发现"


def ask(
    question: Annotated[str, typer.Option(help="The question to ask over SSE.")] = DEMO_QUESTION,
    paper: Annotated[str, typer.Option(help="Paper id the session is scoped to.")] = "P32",
    keep: Annotated[bool, typer.Option(help="Leave the workbench running after the demo.")] = False,
    data: Annotated[Path | None, typer.Option(help="Workbench data directory (default: temporary).")] = None,
) -> None:
    """Build fixtures, start the workbench, seed accounts A and B, upload the corpus, stream one answer."""
    from rig.adapters import WorkbenchAdapter
    from rig.clock import now_ns, wall_ms
    from rig.corpus_load import load_corpus
    from rig.embedded import EmbeddedWorkbench
    from rig.fixtures import ensure_corpus

    try:
        began = time.monotonic()
        corpus_dir, manifest = ensure_corpus(progress=lambda name: console.print(f"  rendered {Path(name).name}",
                                                                                  style="dim"))
        console.print(f"[bold]corpus[/] {corpus_dir} ({len(manifest.files)} files, {time.monotonic() - began:.1f}s)")
        target = EmbeddedWorkbench(data)
        with target:
            url = target.start()
            console.print(f"[bold]workbench[/] {url} (pid {target.pid}, data {target.data_dir})")
            a = target.add_account("researcher-a")
            target.add_account("researcher-b")
            adapter = WorkbenchAdapter(url)
            auth = adapter.login(a.username, a.password)
            project = adapter.create_project(auth, "demo library")
            with progress_bar("uploading", len(manifest.corpus)) as advance:
                loaded = load_corpus(adapter, auth, project, corpus_dir, manifest,
                                     progress=lambda n: advance(Path(n).name[:40]))
            statuses: dict[str, int] = {}
            for f in loaded.files:
                status = f.document.status if f.document else "timeout"
                statuses[status] = statuses.get(status, 0) + 1
            t1 = sorted(f.t1_ms for f in loaded.files if f.t1_ms is not None)
            console.print(f"[bold]ingest[/] {statuses}; T1 median {t1[len(t1) // 2]:.0f} ms, max {t1[-1]:.0f} ms")
            opened = adapter.open_session(auth, project, [loaded.doc(paper)])
            console.print(f"[bold]question[/] ({paper}) {question}\n")
            submitted = adapter.ask(auth, opened.session_id, question)
            first_status = first_token = None
            citations: list[CitationEvent] = []
            for event in adapter.events(auth, submitted.run_id):
                if event.event == "status" and first_status is None:
                    first_status = event.recv_ns
                if isinstance(event, TokenEvent) and event.kind == "answer":
                    first_token = first_token or event.recv_ns
                    console.print(event.text, end="", markup=False, highlight=False)
                if isinstance(event, CitationEvent):
                    citations.append(event)
            done_ns = now_ns()
            console.print("\n")
            _print_citations(citations)
            detail = adapter.run(auth, submitted.run_id)
            _print_run(detail.model_dump(), submitted.submit_ns, first_status, first_token, done_ns, wall_ms)
            if keep:
                console.print(f"workbench left running at {url}; press Ctrl-C to stop")
                while True:
                    time.sleep(3600)
    except RigError as exc:
        raise fail(exc) from None


def _print_citations(citations: list[CitationEvent]) -> None:
    table = Table("marker", "paper", "page", "quote", title="citations")
    for c in citations:
        table.add_row(str(c.data.get("marker")), str(c.data.get("paper_id")),
                      "file" if c.page is None else str(c.page), str(c.data.get("quote", ""))[:80])
    console.print(table)


def _print_run(detail: dict[str, Any], submit_ns: int, status_ns: int | None, token_ns: int | None,
               done_ns: int, wall_ms: object) -> None:
    def ms(ns: int | None) -> str:
        return f"{(ns - submit_ns) / 1e6:.1f} ms" if ns else "-"

    table = Table("field", "value", title=f"run {detail['run_id']}")
    for key in ("state", "end_reason", "trace_id", "rounds", "model_requests", "tool_calls_proposed",
                "tool_calls_executed", "embedding_requests"):
        table.add_row(key, str(detail.get(key)))
    table.add_row("usage", json.dumps(detail.get("usage"), ensure_ascii=False))
    table.add_row("cost", json.dumps(detail.get("cost"), ensure_ascii=False))
    table.add_row("model", json.dumps(detail.get("model"), ensure_ascii=False))
    table.add_row("T3 first status (client)", ms(status_ns))
    table.add_row("T4 first answer token (client)", ms(token_ns))
    table.add_row("T5 full answer (client)", ms(done_ns))
    console.print(table)
    stages = Table("stage", "round", "ms", "ok", title="stages (server)")
    for s in detail.get("stages", []):
        start, end = s.get("started_at_ms"), s.get("ended_at_ms")
        stages.add_row(s["name"], str(s.get("round", "")), f"{end - start:.1f}" if start and end else "-",
                       str(s.get("ok")))
    console.print(stages)
