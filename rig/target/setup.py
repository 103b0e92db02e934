"""The library the gate and the quality workload work on: accounts A and B, their projects, the corpus.

What the setup created (project and document ids, ingest ledger) is stored in the evidence store (meta
`setup`), so a resumed run reuses it instead of uploading again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rig.adapters import Adapter
from rig.adapters.models import Auth
from rig.clock import now_ns
from rig.corpus_load import load_corpus, server_t1_ms
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest

ISOLATED = ["X-CORRUPT", "P44-BROKEN", "P32-INJECTED", "P32-DUPQUOTE", "P35-BLANK", "P32-CHANGED"]


class IngestEntry(BaseModel):
    file: str
    paper_id: str | None
    variant_id: str | None
    project: str
    doc_id: str
    status: str | None
    pages_total: int | None
    pages_with_text: int | None
    error: dict[str, Any] | None
    t1_client_ms: float | None
    t1_server_ms: float | None
    stages: list[dict[str, Any]] = Field(default_factory=list)


class TargetSetup(BaseModel):
    """Ids the cases and turns use; persisted as meta `setup`."""

    embedded: bool
    target_url: str
    usernames: dict[str, str]
    project_a: str
    project_isolated: str
    project_b_shared: str
    project_b_private: str
    docs: dict[str, str]
    isolated: dict[str, str]
    b_shared_doc: str
    b_private_doc: str
    ingest: list[IngestEntry]


def prepare_target(adapter: Adapter, auth: dict[str, Auth], corpus_dir: Path, manifest: CorpusManifest,
                   store: EvidenceStore, *, embedded: bool) -> TargetSetup:
    """Projects for A (main, isolated) and B (shared with A, private), the corpus uploaded and final."""
    a, b = auth["a"], auth["b"]
    stamp = now_ns()
    main = adapter.create_project(a, f"rig gate library {stamp}")
    isolated = adapter.create_project(a, f"rig gate isolated fixtures {stamp}")
    loaded = load_corpus(adapter, a, main, corpus_dir, manifest)
    iso = load_corpus(adapter, a, isolated, corpus_dir, manifest, include_variants=True, only=ISOLATED + ["P32"])
    iso.files = [f for f in iso.files if f.entry.variant_id in ISOLATED or
                 (f.entry.in_corpus and f.entry.paper_id == "P32")]
    b_shared = adapter.create_project(b, f"rig gate B shared {stamp}")
    b_private = adapter.create_project(b, f"rig gate B private {stamp}")
    shared = load_corpus(adapter, b, b_shared, corpus_dir, manifest, only=["P21"])
    private = load_corpus(adapter, b, b_private, corpus_dir, manifest, only=["P24"])
    if not adapter.capabilities().missing("members"):  # without sharing, B's "shared" paper stays B's own
        adapter.add_member(b, b_shared, a.username)
    ingest = []
    for project, batch in ((main, loaded), (isolated, iso), (b_shared, shared), (b_private, private)):
        for f in batch.files:
            doc = f.document
            ingest.append(IngestEntry(
                file=f.entry.file, paper_id=f.entry.paper_id, variant_id=f.entry.variant_id, project=project,
                doc_id=f.doc_id, status=doc.status if doc else None, pages_total=doc.pages_total if doc else None,
                pages_with_text=doc.pages_with_text if doc else None,
                error=doc.error.model_dump() if doc and doc.error else None, t1_client_ms=f.t1_ms,
                t1_server_ms=server_t1_ms(doc) if doc else None,
                stages=[s.model_dump() for s in doc.stages] if doc else []))
    setup = TargetSetup(
        embedded=embedded, target_url=adapter.base_url, usernames={"a": a.username, "b": b.username},
        project_a=main, project_isolated=isolated, project_b_shared=b_shared, project_b_private=b_private,
        docs={f.entry.paper_id: f.doc_id for f in loaded.files if f.entry.paper_id},
        isolated={(f.entry.variant_id or f.entry.paper_id or ""): f.doc_id for f in iso.files},
        b_shared_doc=shared.files[0].doc_id, b_private_doc=private.files[0].doc_id, ingest=ingest)
    store.set_meta("setup", setup)
    return setup
