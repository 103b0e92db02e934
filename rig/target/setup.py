"""The library the gate and the quality workload work on: accounts A and B, their projects, the corpus.

Only what the selected cases need is uploaded (`SetupNeeds`), and the setup adapts to the target's shape: without
projects the target is one shared namespace (every "project" below is that namespace, and the same bytes are
never uploaded twice into it); a file the target refuses as a duplicate is found and reused, saying so. What the
setup created (project and document ids, the ingest ledger with each file's name, derivation, sha256 and any
reuse) is stored in the evidence store (meta `setup`), so a resumed run reuses it and only tops up what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rig.adapters import Adapter
from rig.adapters.ledger import LedgerEntry
from rig.adapters.models import Auth
from rig.clock import now_ns
from rig.corpus_load import LoadedFile, server_t1_ms, upload_one, wait_final
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest
from rig.jsonvalue import ForeignJson

ISOLATED = ["X-CORRUPT", "P44-BROKEN", "P32-INJECTED", "P32-DUPQUOTE", "P35-BLANK", "P32-CHANGED"]
B_PAPERS = {"shared": "P21", "private": "P24"}
SHARED_NAMESPACE = ""  # the project id of a target without projects: its one namespace
Progress = Callable[[str, int, int], None]


class SetupNeeds(BaseModel):
    """What the selected cases need: papers in A's library, isolated fixtures (variant ids, or `P32` for a normal
    copy), and whether B needs papers of its own (one shared with A, one private)."""

    papers: set[str] = Field(default_factory=set)
    isolated: set[str] = Field(default_factory=set)
    b_papers: bool = False

    @classmethod
    def everything(cls, manifest: CorpusManifest) -> SetupNeeds:
        return cls(papers={f.paper_id for f in manifest.corpus if f.paper_id}, isolated=set(ISOLATED) | {"P32"},
                   b_papers=True)

    def union(self, other: SetupNeeds) -> SetupNeeds:
        return SetupNeeds(papers=self.papers | other.papers, isolated=self.isolated | other.isolated,
                          b_papers=self.b_papers or other.b_papers)


class IngestEntry(BaseModel):
    file: str
    paper_id: str | None
    variant_id: str | None
    project: str
    doc_id: str
    status: str | None
    pages_total: int | None
    pages_with_text: int | None
    error: ForeignJson | None  # the target's error object for this file, as it reported it
    t1_client_ms: float | None
    t1_server_ms: float | None
    stages: list[ForeignJson] = Field(default_factory=list)  # the target's ingest stages, as it reported them
    upload_name: str = ""  # the file name the target was given
    derivation: str = ""  # how the fixture was made (a corpus paper, or a variant of one)
    sha256: str = ""  # the rig's own hash of the bytes it sent
    reported_sha256: str | None = None  # the target's, where it reports one (compared, never trusted instead)
    owner: str = "a"
    role: str = "library"  # library (A's papers), isolated (a variant or copy beside them), b_shared, b_private
    reused: str | None = None  # why an existing document was taken instead of an upload
    refused: str | None = None  # the target refused the upload itself (its answer is this file's ingest outcome)
    renamed: str | None = None  # sent under a per-project name (the target keys duplicates by file name)


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
    b_shared_doc: str = ""
    b_private_doc: str = ""
    ingest: list[IngestEntry]
    shape: ForeignJson = Field(default_factory=dict)  # what the target keeps itself (projects, sessions …)


def prepare_target(adapter: Adapter, auth: dict[str, Auth], corpus_dir: Path, manifest: CorpusManifest,
                   store: EvidenceStore, *, embedded: bool, needs: SetupNeeds, saved: TargetSetup | None = None,
                   progress: Progress | None = None) -> TargetSetup:
    """The library for `needs`: projects for A (main, isolated) and B (shared with A, private) where the target has
    projects, and the papers uploaded and final; a `saved` setup is topped up with what it lacks."""
    caps = adapter.capabilities()
    a, b = auth["a"], auth["b"]
    stamp = now_ns()
    setup = saved or TargetSetup(embedded=embedded, target_url=adapter.base_url,
                                 usernames={"a": a.username, "b": b.username}, project_a="", project_isolated="",
                                 project_b_shared="", project_b_private="", docs={}, isolated={}, ingest=[])
    setup.shape = caps.shape()
    remember(adapter, setup)

    def project(field: str, owner: Auth, name: str) -> str:
        if caps.projects and not getattr(setup, field):
            setattr(setup, field, adapter.create_project(owner, f"{name} {stamp}"))
        return str(getattr(setup, field)) if caps.projects else SHARED_NAMESPACE

    known: dict[str, str] | None = None if caps.projects else {e.sha256: e.doc_id for e in setup.ingest if e.sha256}
    plan = _plan_uploads(needs, setup, manifest, a, b)
    share = needs.b_papers and not setup.b_shared_doc and caps.projects and not caps.missing("members")
    if caps.missing("upload"):  # a library its operators manage: the rig's papers are not there, items say so
        if plan:
            store.add_evidence(None, None, "setup", "the target takes no uploads: the rig's papers are not on it", {
                "wanted": [key for *_, files in plan for key, _ in files],
                "why": "target.http configures no upload operation (capability upload)"})
        for field, name, owner, _ in plan:  # the projects still exist (what the cases list and open sessions in)
            project(field, owner, name)
        plan = []
    count = _Count(total=sum(len(files) for *_, files in plan), progress=progress)
    for field, name, owner, files in plan:
        project_id = project(field, owner, name)
        uploaded, pending = _upload(adapter, owner, project_id, files, corpus_dir, store, known, count)
        count.say("waiting for the target to process the uploads")
        wait_final(adapter, owner, project_id, dict(pending), 180.0)
        for key, loaded in uploaded:
            final = pending.get(loaded.doc_id, loaded)  # a reused document shares its first upload's status
            _record(setup, field, key, project_id, owner is b, loaded, final)
    if share and setup.project_b_shared:  # without sharing, B's "shared" paper stays B's own
        adapter.add_member(b, setup.project_b_shared, a.username, user_id=a.user_id)
    store.set_meta("setup", setup)
    return setup


Planned = list[tuple[str, str, Auth, list[tuple[str, Any]]]]  # (project field, project name, owner, files)


def _plan_uploads(needs: SetupNeeds, setup: TargetSetup, manifest: CorpusManifest, a: Auth, b: Auth) -> Planned:
    """What `needs` asks for that `setup` lacks, by the project it goes into."""
    plan: Planned = []
    main = [(p, manifest.paper(p)) for p in sorted(needs.papers - set(setup.docs))]
    if main:
        plan.append(("project_a", "rig gate library", a, main))
    iso = [(v, manifest.paper("P32") if v == "P32" else manifest.variant(v))
           for v in sorted(needs.isolated - set(setup.isolated))]
    if iso:
        plan.append(("project_isolated", "rig gate isolated fixtures", a, iso))
    if needs.b_papers and not setup.b_shared_doc:
        plan.append(("project_b_shared", "rig gate B shared", b, [("b_shared", manifest.paper(B_PAPERS["shared"]))]))
        plan.append(("project_b_private", "rig gate B private", b,
                     [("b_private", manifest.paper(B_PAPERS["private"]))]))
    return plan


@dataclass
class _Count:
    """Uploads done of the total, said as progress."""

    total: int
    progress: Progress | None
    done: int = 0

    def say(self, text: str) -> None:
        if self.progress:
            self.progress(text, self.done, self.total)


def _upload(adapter: Adapter, owner: Auth, project_id: str, files: list[tuple[str, Any]], corpus_dir: Path,
            store: EvidenceStore, known: dict[str, str] | None, count: _Count
            ) -> tuple[list[tuple[str, LoadedFile]], dict[str, LoadedFile]]:
    """Upload `files` into the project, saying what the target did with each that was not a plain upload; the
    uploads by key, and the documents still to become final by id."""
    pending: dict[str, LoadedFile] = {}
    uploaded: list[tuple[str, LoadedFile]] = []
    for key, entry in files:
        count.done += 1
        count.say(f"uploading {Path(entry.file).name[:48]}")
        loaded = upload_one(adapter, owner, project_id, corpus_dir / entry.file, entry, Path(entry.file).name, known)
        uploaded.append((key, loaded))
        for said, why in (("existing document reused", loaded.reused), ("refused by the target", loaded.refused),
                          ("uploaded under a name of its own", loaded.renamed)):
            if why:
                store.add_evidence(None, None, "setup", f"{loaded.upload_name}: {said}",
                                   {"file": loaded.upload_name, "doc_id": loaded.doc_id, "why": why})
        if loaded.doc_id and not loaded.refused:
            pending.setdefault(loaded.doc_id, loaded)
    return uploaded, pending


def _record(setup: TargetSetup, field: str, key: str, project_id: str, by_b: bool, loaded: LoadedFile,
            final: LoadedFile) -> None:
    doc = final.document
    entry = loaded.entry
    setup.ingest.append(IngestEntry(
        file=entry.file, paper_id=entry.paper_id, variant_id=entry.variant_id, project=project_id,
        doc_id=loaded.doc_id, status=doc.status if doc else "refused" if loaded.refused else None,
        pages_total=doc.pages_total if doc else None,
        pages_with_text=doc.pages_with_text if doc else None,
        error=doc.error.model_dump() if doc and doc.error else
        {"code": loaded.refused_code or "upload_refused", "message": loaded.refused} if loaded.refused else None,
        t1_client_ms=None if loaded.reused else final.t1_ms, t1_server_ms=server_t1_ms(doc) if doc else None,
        stages=[s.model_dump() for s in doc.stages] if doc else [],
        upload_name=loaded.upload_name, derivation=entry.derivation, sha256=entry.sha256,
        reported_sha256=final.reported_sha256 or (doc.sha256 if doc and doc.sha256 else None),
        owner="b" if by_b else "a", reused=loaded.reused, refused=loaded.refused, renamed=loaded.renamed,
        role={"project_a": "library", "project_isolated": "isolated"}.get(field, key)))
    if not loaded.doc_id:  # refused with no record kept: nothing to name (the ledger says why)
        return
    if field == "project_a":
        setup.docs[key] = loaded.doc_id
    elif field == "project_isolated":
        setup.isolated[key] = loaded.doc_id
    elif key == "b_shared":
        setup.b_shared_doc = loaded.doc_id
    else:
        setup.b_private_doc = loaded.doc_id


def remember(adapter: Adapter, setup: TargetSetup) -> None:
    """Give the adapter's upload ledger what a saved setup uploaded (a resumed run's adapter starts empty)."""
    for e in setup.ingest:
        if e.doc_id and adapter.uploads.entry(e.doc_id) is None:
            adapter.uploads.add(LedgerEntry(doc_id=e.doc_id, filename=e.upload_name or Path(e.file).name,
                                            sha256=e.sha256, reported_sha256=e.reported_sha256,
                                            reused=e.reused is not None))


def needs_of(tokens: Iterable[str], manifest: CorpusManifest, quality_papers: Callable[[str], list[str]]) -> SetupNeeds:
    """SetupNeeds from a case's declared tokens: a paper id (`P32`), a variant id (`P32-DUPQUOTE`), `isolated:P32`
    (a normal copy beside the variants), `B` (B's own papers), `quality:<record prefix>` (a quality case's allowed
    papers), `*` (the whole corpus)."""
    out = SetupNeeds()
    variants = {f.variant_id for f in manifest.files if f.variant_id}
    for token in tokens:
        if token == "*":
            out = out.union(SetupNeeds(papers={f.paper_id for f in manifest.corpus if f.paper_id}))
        elif token == "B":
            out.b_papers = True
        elif token.startswith("isolated:"):
            out.isolated.add(token.split(":", 1)[1])
        elif token.startswith("quality:"):
            out.papers |= set(quality_papers(token.split(":", 1)[1]))
        elif token in variants:
            out.isolated.add(token)
        else:
            out.papers.add(token)
    return out
