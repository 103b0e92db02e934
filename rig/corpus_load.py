"""Uploading the fixture corpus into a target project and waiting for every file to reach a final status."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rig.adapters.base import Adapter
from rig.adapters.models import Auth, Document
from rig.clock import now_ns
from rig.errors import TargetHTTPError
from rig.fixtures.manifest import CorpusFile, CorpusManifest


@dataclass
class LoadedFile:
    entry: CorpusFile
    doc_id: str
    accepted_ns: int
    document: Document | None = None
    final_ns: int | None = None

    @property
    def t1_ms(self) -> float | None:
        """T1 for the file: upload accepted → final status seen (client clock)."""
        return (self.final_ns - self.accepted_ns) / 1e6 if self.final_ns else None


@dataclass
class LoadedCorpus:
    project_id: str
    files: list[LoadedFile] = field(default_factory=list)

    def doc(self, paper_id: str) -> str:
        """doc_id of a corpus paper (one of the 28)."""
        return next(f.doc_id for f in self.files if f.entry.in_corpus and f.entry.paper_id == paper_id)

    def variant(self, variant_id: str) -> str:
        return next(f.doc_id for f in self.files if f.entry.variant_id == variant_id)

    def by_doc(self, doc_id: str) -> LoadedFile:
        return next(f for f in self.files if f.doc_id == doc_id)


def load_corpus(adapter: Adapter, auth: Auth, project_id: str, corpus_dir: Path, manifest: CorpusManifest,
                *, include_variants: bool = False, only: list[str] | None = None, timeout_s: float = 180.0,
                progress: Callable[[str], None] | None = None) -> LoadedCorpus:
    """Upload the 28 papers (and the variants when asked), then poll until each is final."""
    loaded = LoadedCorpus(project_id)
    for entry in manifest.files:
        if not entry.in_corpus and not include_variants:
            continue
        if only is not None and entry.paper_id not in only and entry.variant_id not in only:
            continue
        up = adapter.upload(auth, project_id, corpus_dir / entry.file, paper_id=entry.paper_id,
                            filename=Path(entry.file).name)
        loaded.files.append(LoadedFile(entry, up.doc_id, up.accepted_ns))
        if progress:
            progress(entry.file)
    pending = {f.doc_id: f for f in loaded.files}

    deadline = time.monotonic() + timeout_s
    while pending:
        listed = adapter.documents(auth, project_id)
        # a target may leave a failed upload out of its project listing: ask for those one by one
        absent = set(pending) - {d.doc_id for d in listed}
        for doc in listed + [d for d in (_document(adapter, auth, i) for i in absent) if d is not None]:
            f = pending.get(doc.doc_id)
            if f is not None and doc.final:
                f.document = doc
                f.final_ns = now_ns()
                del pending[doc.doc_id]
        if pending:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
    return loaded


def _document(adapter: Adapter, auth: Auth, doc_id: str) -> Document | None:
    try:
        return adapter.document(auth, doc_id)
    except TargetHTTPError as exc:
        if exc.status in (404, 410):
            return None  # not known (yet)
        raise


def server_t1_ms(doc: Document) -> float | None:
    """T1 from the target's own stage stamps: upload start → last stage end."""
    starts = [s.started_at_ms for s in doc.stages if s.started_at_ms is not None]
    ends = [s.ended_at_ms for s in doc.stages if s.ended_at_ms is not None]
    return (max(ends) - min(starts)) if starts and ends else None


__all__ = ["LoadedCorpus", "LoadedFile", "load_corpus", "server_t1_ms"]
