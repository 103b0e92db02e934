"""Quality uploads only what the selected case-turns need: their allowed papers, 专家-20's for 用户-25's summary
fixture, the injected copy of P32 for 对抗-06 — and the whole library once a direct search is selected (it searches
the server's whole library)."""

from __future__ import annotations

from rig.catalog import load_eval_set
from rig.fixtures import ensure_corpus
from rig.quality.plan import plan_cases, quality_needs


def test_only_the_selected_turns_papers_are_needed() -> None:
    eval_set, (_, manifest) = load_eval_set(None), ensure_corpus()
    user4 = quality_needs(plan_cases(eval_set, ["用户-04"]), eval_set, manifest)
    allowed = {p for t in eval_set.quality_case("用户", 4) for p in t.allowed_paper_ids}
    assert user4.papers == allowed and not user4.isolated and not user4.b_papers
    summary = quality_needs(plan_cases(eval_set, ["用户-25"]), eval_set, manifest)
    assert {p for t in eval_set.quality_case("专家", 20) for p in t.allowed_paper_ids} <= summary.papers
    assert quality_needs(plan_cases(eval_set, ["对抗-06"]), eval_set, manifest).isolated == {"P32-INJECTED"}
    assert len(quality_needs(plan_cases(eval_set, ["专家-01"]), eval_set, manifest).papers) == 28
