"""Pydantic models of the eval set (`eval_set_v2.json`): papers, reliability cases, quality turns, metrics."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

_CODE = re.compile(r"[TREX]\d+")
_PAPER = re.compile(r"P\d{2}")


def split_codes(text: str) -> list[str]:
    """Metric codes named in a field such as `T3、T4、T7` (order kept, duplicates dropped)."""
    return list(dict.fromkeys(_CODE.findall(text or "")))


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Paper(_Loose):
    """A paper of the library: its id, file name, reference pages and ground-truth points."""

    paper_id: str
    name: str
    reference_pages: int | str
    evidence_scope: str
    gt_points: str
    limits: str

    @property
    def has_ground_truth(self) -> bool:
        """False for papers the eval set keeps only for the ingest/inventory check."""
        return not isinstance(self.reference_pages, str) or any(c.isdigit() for c in self.reference_pages)

    @property
    def reference_page_numbers(self) -> list[int]:
        """Physical pages the ground truth points at, e.g. `1、3` → [1, 3], `1–3` → [1, 2, 3]."""
        text = str(self.reference_pages)
        pages: list[int] = []
        for part in re.split(r"[、,，]", text):
            m = re.match(r"\s*(\d+)\s*[–\-~]\s*(\d+)", part)
            if m:
                pages.extend(range(int(m.group(1)), int(m.group(2)) + 1))
            elif part.strip().isdigit():
                pages.append(int(part.strip()))
        return pages


class CaseConfiguration(_Loose):
    record_id: str
    test_type: str
    scenario: str = ""
    required_metrics: str = ""
    related_metrics: str = ""
    applicability: str = ""
    performance_metrics: str = ""
    experience_collection: str = ""
    preparation: str = ""
    focus: str = ""
    final_turn: bool = True


class ReliabilityCase(_Loose):
    """One of the eval set's reliability cases (record id `可靠性-NN-1`)."""

    case_id: int
    module: str
    name: str
    applicability: str
    preparation: str
    operation: str
    expected: str
    rules: str
    evidence: str
    configuration: CaseConfiguration

    @property
    def record_id(self) -> str:
        return self.configuration.record_id

    @property
    def performance_codes(self) -> list[str]:
        return split_codes(self.configuration.performance_metrics)

    @property
    def related_codes(self) -> list[str]:
        return split_codes(self.configuration.related_metrics)

    @property
    def conditional(self) -> bool:
        """True where the eval set makes the case conditional (条件必需 / 条件项)."""
        return self.applicability.startswith("条件")


class QualityTurn(_Loose):
    """One case-turn of the quality sets (expert, user, adversarial)."""

    sheet: str
    case_id: int
    turn: int
    name: str
    level: str
    allowed_papers: str
    preparation: str
    prompt: str
    gt: str
    rules: str
    reference: str
    dimensions: str
    configuration: CaseConfiguration

    @property
    def record_id(self) -> str:
        return self.configuration.record_id

    @property
    def allowed_paper_ids(self) -> list[str]:
        return list(dict.fromkeys(_PAPER.findall(self.allowed_papers)))

    @property
    def dimension_codes(self) -> list[str]:
        return split_codes(self.dimensions)

    @property
    def performance_codes(self) -> list[str]:
        return split_codes(self.configuration.performance_metrics)

    @property
    def direct_tool(self) -> bool:
        """Direct tool cases call the retrieval entry, not the chat."""
        return self.configuration.test_type == "直接工具"


class Metric(_Loose):
    code: str
    category: str
    group: str
    name: str
    description: str
    measurement: str = ""
    evidence: str = ""
    scope: str = ""
    value_type: str = ""


class EvalSet(_Loose):
    """The whole eval set."""

    version: str
    quality: list[QualityTurn]
    reliability: list[ReliabilityCase]
    papers: list[Paper]
    metrics: list[Metric] = Field(default_factory=list)

    def paper(self, paper_id: str) -> Paper:
        for p in self.papers:
            if p.paper_id == paper_id:
                return p
        raise KeyError(paper_id)

    def allowed_papers(self, key: str) -> list[str]:
        """The papers a quality case's turns may use, by its record prefix (`用户-4` or `用户-04`)."""
        prefix, _, number = key.rpartition("-")
        return sorted({p for t in self.quality_case(prefix, int(number)) for p in t.allowed_paper_ids})

    def quality_case(self, prefix: str, case_id: int) -> list[QualityTurn]:
        """The turns of one quality case, e.g. `quality_case("用户", 4)` → 用户-04-1, -2, -3."""
        head = f"{prefix}-{case_id:02d}-"
        return [q for q in self.quality if q.record_id.startswith(head)]

    def case(self, case_id: int) -> ReliabilityCase:
        for c in self.reliability:
            if c.case_id == case_id:
                return c
        raise KeyError(case_id)
