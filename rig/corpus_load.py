"""Uploading the fixture corpus into a target project and waiting for every file to reach a final status.

A target that refuses an upload as a duplicate (409: a store keyed by file name already holds it) gets the document
already there reused, found by name or content hash, and the reuse is said in the file's record; in a shared
namespace the rig never uploads the same bytes twice (`known`: sha256 → the document it already has).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.adapters.base import Adapter
from rig.adapters.ledger import LedgerEntry
from rig.adapters.models import Auth, Document
from rig.adapters.pace import RatePace
from rig.clock import now_ns
from rig.errors import CapabilityMissing, FixtureError, TargetHTTPError
from rig.fixtures.manifest import CorpusFile, CorpusManifest


@dataclass
class LoadedFile:
    entry: CorpusFile
    doc_id: str
    accepted_ns: int
    document: Document | None = None
    final_ns: int | None = None
    upload_name: str = ""
    reused: str | None = None  # why the rig took a document already there instead of uploading (None: it uploaded)
    reported_sha256: str | None = None
    refused: str | None = None  # the target refused the upload itself: its answer is the document's ingest outcome
    refused_code: str | None = None  # the outcome the refusal names (the target's error code, or its description's)
    renamed: str | None = None  # sent under a name of its own (the target keys duplicates by the account's file name)

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


BUSY = (429, 503)  # "not now": waited out (rig.adapters.pace) before the upload counts as refused


def upload_one(adapter: Adapter, auth: Auth, project_id: str, path: Path, entry: CorpusFile, name: str,
               known: dict[str, str] | None = None, *, sleep: Callable[[float], None] = time.sleep) -> LoadedFile:
    """Upload one corpus file, or reuse the document the target (or the rig, in a shared namespace) already has.

    One document never stops the setup: a target that refuses the upload itself (any 4xx/5xx but a duplicate) has
    given that document's ingest outcome — kept in `refused`, with the failed record the target kept, if any; a busy
    target (429, 503) is retried with a bounded back-off first. A duplicate (409) reuses the owner's document of that
    name in this project; where the duplicate key is the account's file name, the copy is sent again under a name
    of its own."""
    sent = hashlib.sha256(path.read_bytes()).hexdigest()
    if sent != entry.sha256:  # the rig's own bytes changed since the corpus was built: never the target's doing
        raise FixtureError(f"{path} is not the corpus file the manifest names (sha256 {sent[:12]}…, manifest "
                           f"{entry.sha256[:12]}…): the rig's fixture cache is corrupt, nothing was uploaded",
                           fix=f"rig fixtures verify {path.parent}; delete that directory and run again (it is "
                               "rebuilt, byte for byte)")
    if known is not None and entry.sha256 in known:
        return LoadedFile(entry, known[entry.sha256], now_ns(), upload_name=name,
                          reused="the same bytes were already uploaded by the rig into this shared namespace")
    try:
        up = _send(adapter, auth, project_id, path, entry, name, sleep)
    except TargetHTTPError as exc:
        loaded = _refused(adapter, auth, project_id, path, entry, name, exc, sleep)
    else:
        loaded = LoadedFile(entry, up.doc_id, up.accepted_ns, upload_name=name, reported_sha256=up.reported_sha256)
    if known is not None and loaded.doc_id:
        known[entry.sha256] = loaded.doc_id
    return loaded


def _send(adapter: Adapter, auth: Auth, project_id: str, path: Path, entry: CorpusFile, name: str,
          sleep: Callable[[float], None]) -> Any:
    """The upload, tried again while the target says it is busy (429/503) on the adapter's one pace: its Retry-After,
    else the bounded back-off (a 429 the adapter's own pace already waited out is not waited for twice)."""
    pace = RatePace(sleep=sleep)
    attempt, spent = 0, 0.0
    while True:
        try:
            return adapter.upload(auth, project_id, path, paper_id=entry.paper_id, filename=name)
        except TargetHTTPError as exc:
            paced = exc.status == 429 and adapter.pace is not None
            wait = pace.next_wait(attempt, exc.retry_after_s, spent) if exc.status in BUSY and not paced else None
            if wait is None:
                raise
            pace.wait("upload", wait)
            attempt, spent = attempt + 1, spent + wait


def _refused(adapter: Adapter, auth: Auth, project_id: str, path: Path, entry: CorpusFile, name: str,
             exc: TargetHTTPError, sleep: Callable[[float], None]) -> LoadedFile:
    """What a refused upload leaves: a reused duplicate, a copy under its own name, or the refusal as the outcome."""
    said = f"{exc.status}" + (f" {exc.code}" if exc.code else "") + (f": {exc.said}" if exc.said else "")
    if exc.status == 409:
        found = _existing(adapter, auth, project_id, name, entry.sha256)
        if found is not None:
            adapter.uploads.add(LedgerEntry(doc_id=found.doc_id, filename=name, sha256=entry.sha256, reused=True))
            return LoadedFile(entry, found.doc_id, now_ns(), upload_name=name,
                              reused=f"refused as a duplicate ({said}); {auth.username}'s document already in this "
                                     f"project under this {'name' if found.filename == name else 'content'} is reused")
        own = _own_name(name, project_id)
        if own != name:  # the duplicate key is the account's file name, not the project: a copy of its own name
            loaded = upload_one(adapter, auth, project_id, path, entry, own, None, sleep=sleep)
            loaded.renamed = f"{name} was refused as a duplicate ({said}) and this project holds none of that name: " \
                             f"uploaded as {own}"
            return loaded
    record = _existing(adapter, auth, project_id, name, entry.sha256)  # a failed record the target kept
    return LoadedFile(entry, record.doc_id if record else "", now_ns(), document=record, upload_name=name,
                      refused=f"the upload was refused ({said})" + ("" if record else "; the project lists no record of it"),
                      refused_code=exc.code)


def _own_name(name: str, project_id: str) -> str:
    """A per-project file name: `paper.pdf` → `paper.<project>.pdf` (the project id's last 8 characters)."""
    stem, dot, ext = name.rpartition(".")
    tag = "".join(ch for ch in project_id if ch.isalnum())[-8:] or "copy"
    if f".{tag}" in name:
        return name
    return f"{stem}.{tag}.{ext}" if dot else f"{name}.{tag}"


def _existing(adapter: Adapter, auth: Auth, project_id: str, name: str, sha256: str) -> Document | None:
    """The document this account holds in `project_id` under `name` (or with these bytes, where the target reports
    hashes). Listed with the account's own credentials in its own project: another account's copy is never taken."""
    try:
        listed = adapter.documents(auth, project_id)
    except (CapabilityMissing, TargetHTTPError):
        return None
    mine = [d for d in listed if d.owner_id in (None, auth.user_id, auth.username)]
    return next((d for d in mine if d.filename == name), None) or next(
        (d for d in mine if d.sha256 and d.sha256 == sha256), None)


def load_corpus(adapter: Adapter, auth: Auth, project_id: str, corpus_dir: Path, manifest: CorpusManifest,
                *, include_variants: bool = False, only: list[str] | None = None, timeout_s: float = 180.0,
                progress: Callable[[str], None] | None = None, known: dict[str, str] | None = None) -> LoadedCorpus:
    """Upload the 28 papers (and the variants when asked), then poll until each is final. `known` (sha256 → doc id)
    is the rig's own uploads in a shared namespace: those bytes are reused, not sent again."""
    loaded = LoadedCorpus(project_id)
    for entry in manifest.files:
        if not entry.in_corpus and not include_variants:
            continue
        if only is not None and entry.paper_id not in only and entry.variant_id not in only:
            continue
        loaded.files.append(upload_one(adapter, auth, project_id, corpus_dir / entry.file, entry,
                                       Path(entry.file).name, known))
        if progress:
            progress(entry.file)
    pending = {f.doc_id: f for f in loaded.files}

    wait_final(adapter, auth, project_id, pending, timeout_s)
    return loaded


def wait_final(adapter: Adapter, auth: Auth, project_id: str, pending: dict[str, LoadedFile], stall_s: float) -> None:
    """Poll until every pending file's document is final; the wait goes on while their statuses move and ends
    after `stall_s` without any change (those files stay without a final document: their status is unknown)."""
    seen: tuple[object, ...] = ()
    moved = time.monotonic()
    while pending:
        listed = _listed(adapter, auth, project_id)
        # a target may leave a failed upload out of its project listing: ask for those one by one
        absent = set(pending) - {d.doc_id for d in listed}
        docs = listed + [d for d in (_document(adapter, auth, i) for i in absent) if d is not None]
        for doc in docs:
            f = pending.get(doc.doc_id)
            if f is not None and doc.final:
                f.document = doc
                f.final_ns = now_ns()
                del pending[doc.doc_id]
        state = tuple(sorted((d.doc_id, d.status, len(d.stages)) for d in docs if d.doc_id in pending))
        if state != seen:
            seen, moved = state, time.monotonic()
        elif time.monotonic() - moved > stall_s:
            return
        if pending:
            time.sleep(0.05)


def _listed(adapter: Adapter, auth: Auth, project_id: str) -> list[Document]:
    try:
        return adapter.documents(auth, project_id)
    except CapabilityMissing:  # no listing: each document is read on its own
        return []


def _document(adapter: Adapter, auth: Auth, doc_id: str) -> Document | None:
    try:
        return adapter.document(auth, doc_id)
    except CapabilityMissing:
        return None
    except TargetHTTPError as exc:
        if exc.status in (404, 410):
            return None  # not known (yet)
        raise


def server_t1_ms(doc: Document) -> float | None:
    """T1 from the target's own stage stamps: upload start → last stage end."""
    starts = [s.started_at_ms for s in doc.stages if s.started_at_ms is not None]
    ends = [s.ended_at_ms for s in doc.stages if s.ended_at_ms is not None]
    return (max(ends) - min(starts)) if starts and ends else None


__all__ = ["LoadedCorpus", "LoadedFile", "load_corpus", "server_t1_ms", "upload_one", "wait_final"]
