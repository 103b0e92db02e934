"""What a reliability case works with: the recording context plus its eval-set case, the corpus and ids."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from opentelemetry.trace import Span

from rig.catalog.models import EvalSet, ReliabilityCase
from rig.errors import RigError
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest
from rig.gate.registry import CaseSpec
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.telemetry.tracing import RigTracer

if TYPE_CHECKING:
    from rig.gate.browser_kit import BrowserKit


class CaseContext(RecordingContext):
    """Handed to each reliability case function; every helper records what it did."""

    def __init__(self, rep: int, case: ReliabilityCase, spec: CaseSpec, store: EvidenceStore, target: TargetSession,
                 eval_set: EvalSet, corpus_dir: Path, manifest: CorpusManifest, *, tracer: RigTracer,
                 span: Span) -> None:
        super().__init__(rep, case.case_id, store, target, tracer=tracer, span=span)
        self.case = case
        self.spec = spec
        self.eval_set = eval_set
        self.corpus_dir = corpus_dir
        self.manifest = manifest
        self.browser: BrowserKit | None = None

    def doc(self, paper_id: str) -> str:
        """doc_id of one of the 28 papers in A's main project."""
        try:
            return self.target.setup.docs[paper_id]
        except KeyError:
            raise RigError(f"{paper_id} was not uploaded for this run",
                           fix=f"declare it in case {self.case.case_id}'s papers (@case(..., papers=...))") from None

    def paper_of(self, doc_id: str) -> str:
        """The paper or variant id a doc_id was uploaded as (the doc_id itself when it is none of the rig's)."""
        for key, value in (*self.target.setup.docs.items(), *self.target.setup.isolated.items()):
            if value == doc_id:
                return key
        return doc_id

    def isolated(self, key: str) -> str:
        """doc_id in A's isolated project: a variant id (`P32-INJECTED`) or `P32` (a normal copy)."""
        try:
            return self.target.setup.isolated[key]
        except KeyError:
            raise RigError(f"the isolated fixture {key} was not uploaded for this run",
                           fix=f"declare it in case {self.case.case_id}'s papers (@case(..., papers=...))") from None

    def fixture_path(self, *, paper_id: str | None = None, variant_id: str | None = None) -> Path:
        entry = self.manifest.variant(variant_id) if variant_id else self.manifest.paper(paper_id or "")
        return self.corpus_dir / entry.file
