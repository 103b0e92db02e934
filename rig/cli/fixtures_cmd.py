"""`rig fixtures`: build and verify the deterministic fixture corpus."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.table import Table

from rig.catalog import load_eval_set
from rig.cli.console import JsonFlag, console, fail, print_json, progress_bar
from rig.errors import RigError
from rig.fixtures import build_corpus, corpus_dir, verify_corpus
from rig.fixtures.spec import load_spec


class CorpusCheck(BaseModel):
    """`rig fixtures verify --json`: the directory checked and every file that differs from its manifest."""

    directory: Path
    problems: list[str]


app = typer.Typer(help="Build and check the fixture corpus (28 eval-set papers + isolated variants).",
                  no_args_is_help=True)


@app.command("build")
def build(out: Annotated[Path, typer.Option(help="Directory to write the corpus and manifest.json into.")] =
          Path("fixtures/corpus"), json_out: JsonFlag = False) -> None:
    """Render every PDF (same bytes on every run) and write manifest.json."""

    try:
        total = len(load_eval_set().papers) + len(load_spec().variants)
        began = time.monotonic()
        if json_out:
            manifest = build_corpus(out)
        else:
            with progress_bar("rendering", total) as advance:
                manifest = build_corpus(out, progress=lambda name: advance(Path(name).name[:48]))
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(manifest)
        return
    table = Table("file", "paper", "pages", "text pages", "expected", "sha256", title=f"corpus in {out}")
    for f in manifest.files:
        table.add_row(Path(f.file).name[:50], f.paper_id or "-", str(f.pages), str(len(f.text_pages)),
                      "/".join(f.expected_statuses), f.sha256[:12])
    console.print(table)
    console.print(f"{len(manifest.files)} files in {time.monotonic() - began:.1f}s, digest {manifest.digest[:16]}")


@app.command("verify")
def verify(directory: Annotated[Path | None, typer.Argument(
        help="A built corpus directory (default: the cache every command reads, by the corpus's digest).")] = None,
           json_out: JsonFlag = False) -> None:
    """Re-hash every file against manifest.json; exit 1 on any difference."""
    directory = directory or corpus_dir()
    try:
        problems = verify_corpus(directory)
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(CorpusCheck(directory=directory, problems=problems))
        raise typer.Exit(1 if problems else 0)
    for p in problems:
        console.print(f"[red]✗[/] {p}")
    if problems:
        raise typer.Exit(1)
    console.print(f"[green]✓[/] every file in {directory} matches its manifest")
