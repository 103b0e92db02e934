"""A prepared embedded workbench for the benchmarks: one account, P32 uploaded, a session on it."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth
from rig.corpus_load import load_corpus
from rig.fixtures import ensure_corpus
from rig.target.embedded import EmbeddedWorkbench


@dataclass
class BenchTarget:
    target: EmbeddedWorkbench
    adapter: WorkbenchAdapter
    auth: Auth
    project: str
    doc: str
    password: str
    username: str


def bench_target(data: Path, extra_args: list[str] | None = None) -> BenchTarget:
    corpus_dir, manifest = ensure_corpus()
    token = secrets.token_urlsafe(12)
    target = EmbeddedWorkbench(data, chaos_token=token, extra_args=extra_args)
    target.start()
    account = target.add_account("bench")
    adapter = WorkbenchAdapter(target.url, chaos_token=token)
    auth = adapter.login(account.username, account.password)
    project = adapter.create_project(auth, "bench")
    loaded = load_corpus(adapter, auth, project, corpus_dir, manifest, only=["P32"])
    return BenchTarget(target, adapter, auth, project, loaded.doc("P32"), account.password, account.username)
