"""From the eval set's 75 quality rows to cases: turns grouped by record id, each case with its scenario."""

from __future__ import annotations

from rig.catalog.models import EvalSet
from rig.errors import ConfigError
from rig.fixtures import CorpusManifest
from rig.quality.driver import QualityCase
from rig.quality.registry import fixture_kind
from rig.target.setup import SetupNeeds


def plan_cases(eval_set: EvalSet, only: list[str] | None = None) -> list[QualityCase]:
    """Cases in eval-set order; `only` keeps cases by label (`用户-04`) or sheet prefix (`对抗`)."""
    cases: dict[str, QualityCase] = {}
    for key, turn in enumerate(eval_set.quality, start=1):
        prefix, number, _ = turn.record_id.rsplit("-", 2)
        label = f"{prefix}-{int(number):02d}"
        if label not in cases:
            kind = "direct_tool" if turn.direct_tool else fixture_kind(label) or "conversation"
            cases[label] = QualityCase(prefix=prefix, case_id=int(number), kind=kind, turns=[])
        cases[label].turns.append((key, turn))
    chosen = list(cases.values())
    if only:
        unknown = [o for o in only if not any(c.label == o or c.prefix == o for c in chosen)]
        if unknown:
            raise ConfigError(f"no quality case {unknown}",
                              fix="use a case label such as 用户-04, or a set: 专家, 用户, 对抗")
        chosen = [c for c in chosen if c.label in only or c.prefix in only]
    return chosen


def quality_needs(cases: list[QualityCase], eval_set: EvalSet, manifest: CorpusManifest) -> SetupNeeds:
    """What the selected case-turns need uploaded: their allowed papers; the whole library for a direct search (it
    searches the server's whole library, and recall is measured against it); 专家-20's papers for the summary fixture
    of 用户-25 (it replays 专家-20's turns first); the injected copy of P32 for 对抗-06."""
    needs = SetupNeeds()
    for case in cases:
        if case.kind == "direct_tool":
            return SetupNeeds.everything(manifest)
        turns = [t for _, t in case.turns]
        if case.kind == "summary_fixture":
            turns += eval_set.quality_case("专家", 20)
        for turn in turns:
            needs.papers |= set(turn.allowed_paper_ids)
        if case.kind == "injection":
            needs.isolated |= {"P32-INJECTED"}
    return needs
