"""What a reliability case works with: the recording context plus its eval-set case, the corpus and ids."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from opentelemetry.trace import Span

from rig.adapters.base import Adapter
from rig.catalog.models import EvalSet, ReliabilityCase
from rig.coverage.recorder import CoverageRecorder, CoveredAdapter
from rig.errors import CapabilityMissing, RigError
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest
from rig.jsonvalue import JsonObject
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.telemetry.tracing import RigTracer
from rig.verdict import Item, Verdict


class CaseContext(RecordingContext):
    """Handed to each reliability case function; every helper records what it did."""

    def __init__(self, rep: int, case: ReliabilityCase, store: EvidenceStore, target: TargetSession,
                 eval_set: EvalSet, corpus_dir: Path, manifest: CorpusManifest, *, tracer: RigTracer,
                 span: Span, coverage: CoverageRecorder | None = None) -> None:
        self.coverage = coverage or CoverageRecorder()
        self._covered_from = len(self.coverage.exercises)
        super().__init__(rep, case.case_id, store, target, tracer=tracer, span=span)
        self._covered = CoveredAdapter(cast(Adapter, self._linked), self.coverage)
        self.case = case
        self.eval_set = eval_set
        self.corpus_dir = corpus_dir
        self.manifest = manifest

    @property
    def adapter(self) -> Adapter:
        """The target's adapter, each operation on an object noted in the coverage matrix (`rig.coverage`)."""
        return cast(Adapter, self._covered)

    def item(self, name: str, ok: bool | None | Verdict, reason: str, *evidence_ids: int,
             required: bool = True, needs: tuple[str, ...] = (), seen: JsonObject | None = None) -> Item:
        recorded = super().item(name, ok, reason, *evidence_ids, required=required, needs=needs, seen=seen)
        self.coverage.attribute(f"case {self.case.case_id} {name}")
        return recorded

    def close(self) -> None:
        """What the case exercised goes to the store (kind `coverage`) with the rest of its evidence."""
        self.coverage.attribute(f"case {self.case.case_id}")
        mine = self.coverage.exercises[self._covered_from:]
        if mine:
            self.evidence("coverage", f"{len(mine)} operation call(s) on objects",
                          [e.model_dump() for e in mine])
        super().close()

    def doc(self, paper_id: str) -> str:
        """doc_id of one of the 28 papers in A's main project."""
        doc_id = self.target.setup.docs.get(paper_id)
        if not doc_id:
            raise self._unavailable(paper_id, "library")
        return doc_id

    def _no_upload(self, key: str) -> CapabilityMissing | None:
        if not self.caps.missing("upload"):
            return None
        return CapabilityMissing("upload", detail=f"the rig's own {key} is not on the target, which takes no uploads "
                                 "(its library is its operators')")

    def paper_of(self, doc_id: str) -> str:
        """The paper or variant id a doc_id was uploaded as (the doc_id itself when it is none of the rig's)."""
        for key, value in (*self.target.setup.docs.items(), *self.target.setup.isolated.items()):
            if value == doc_id:
                return key
        return doc_id

    def isolated(self, key: str) -> str:
        """doc_id in A's isolated project: a variant id (`P32-INJECTED`) or `P32` (a normal copy)."""
        doc_id = self.target.setup.isolated.get(key)
        if not doc_id:
            raise self._unavailable(key, "isolated")
        return doc_id

    def _unavailable(self, key: str, role: str) -> RigError:
        """Why a paper the case needs has no document: the target refused its upload (that is its ingest outcome,
        judged by cases 6 and 9; here the case cannot go on: U), the target takes no uploads at all (BLOCKED), or the
        case never declared it."""
        blocked = self._no_upload(key)
        if blocked is not None:
            return blocked
        refused = next((e for e in self.target.setup.ingest if e.role == role and e.refused
                        and key in (e.paper_id if role == "library" else e.variant_id or "P32", e.variant_id)), None)
        if refused is not None:
            return RigError(f"{key} is not on the target: {refused.refused} (its ingest outcome, judged by cases 6 "
                            "and 9)", fix="see the setup evidence for the target's answer")
        what = key if role == "library" else f"the isolated fixture {key}"
        return RigError(f"{what} was not uploaded for this run",
                        fix=f"declare it in case {self.case.case_id}'s papers (@case(..., papers=...))")

    def fixture_path(self, *, paper_id: str | None = None, variant_id: str | None = None) -> Path:
        entry = self.manifest.variant(variant_id) if variant_id else self.manifest.paper(paper_id or "")
        return self.corpus_dir / entry.file
