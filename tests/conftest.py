"""Shared fixtures: the fixture corpus, and a live reference workbench on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth
from rig.corpus_load import LoadedCorpus, load_corpus
from rig.fixtures import CorpusManifest, ensure_corpus
from rig.target.embedded import Account, EmbeddedWorkbench

CHAOS_TOKEN = "test-chaos-token"


@dataclass
class Corpus:
    directory: Path
    manifest: CorpusManifest


@dataclass
class LiveWorkbench:
    """A running workbench with accounts A and B, A's project holding the corpus and the variants."""

    target: EmbeddedWorkbench
    adapter: WorkbenchAdapter
    a: Account
    b: Account
    auth_a: Auth
    auth_b: Auth
    corpus: LoadedCorpus

    @property
    def url(self) -> str:
        return self.target.url


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    directory, manifest = ensure_corpus()
    return Corpus(directory, manifest)


def start_workbench(tmp: Path, corpus: Corpus, *, defects: list[str] | None = None,
                    include_variants: bool = True, extra_args: list[str] | None = None) -> LiveWorkbench:
    target = EmbeddedWorkbench(tmp, chaos_token=CHAOS_TOKEN, defects=defects, extra_args=extra_args)
    target.start()
    a = target.add_account("alice")
    b = target.add_account("bob")
    adapter = WorkbenchAdapter(target.url, chaos_token=CHAOS_TOKEN)
    auth_a = adapter.login(a.username, a.password)
    auth_b = adapter.login(b.username, b.password)
    project = adapter.create_project(auth_a, "library of A")
    loaded = load_corpus(adapter, auth_a, project, corpus.directory, corpus.manifest, include_variants=include_variants)
    return LiveWorkbench(target, adapter, a, b, auth_a, auth_b, loaded)


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory, corpus: Corpus) -> Iterator[LiveWorkbench]:
    tmp = tmp_path_factory.mktemp("workbench")
    wb = start_workbench(tmp, corpus, extra_args=["--trace-file", str(tmp / "spans.jsonl")])
    try:
        yield wb
    finally:
        wb.adapter.close()
        wb.target.cleanup()


@pytest.fixture()
def chaos(live: LiveWorkbench) -> Iterator[WorkbenchAdapter]:
    """The adapter for chaos calls; faults and settings are reset after the test."""
    defaults = live.adapter.chaos("GET", "settings")
    try:
        yield live.adapter
    finally:
        live.adapter.chaos("DELETE", "faults")
        live.adapter.chaos("PUT", "settings", defaults)
