"""The mechanical quality metrics on hand-built hits and answers, each with a case that fails."""

from __future__ import annotations

import math

import pytest

from rig.adapters.models import Citation
from rig.quality import metrics
from rig.quality.judge import parse_proposal
from rig.quality.overlap import markers, overlap, sentences, terms
from rig.results.quality import RankedHit
from rig.verdict import Verdict


def hit(rank: int, paper: str, page: int = 1, chunk: str | None = None, text: str = "") -> RankedHit:
    return RankedHit(rank=rank, doc_id=f"doc-{paper}", paper_id=paper, page=page, chunk_id=chunk or f"{paper}-{rank}",
                     text=text)


def test_recall_counts_target_papers_in_the_first_ten_only() -> None:
    hits = [hit(i, "P99") for i in range(1, 11)] + [hit(11, "P32")]
    assert metrics.recall_at_k(hits, ["P32"]).value == 0.0
    hits[4] = hit(5, "P32")
    m = metrics.recall_at_k(hits, ["P32", "P13"])
    assert (m.value, m.numerator, m.denominator) == (0.5, 1, 2)


def test_ndcg_gains_each_paper_once_at_its_first_hit() -> None:
    targets = ["P13", "P32"]
    perfect = [hit(1, "P32"), hit(2, "P13"), hit(3, "P32")]
    assert metrics.ndcg_at_k(perfect, targets).value == 1.0
    late = [hit(1, "P99"), hit(2, "P99"), hit(3, "P32"), hit(4, "P32")]
    ideal = 1 + 1 / math.log2(3)
    assert metrics.ndcg_at_k(late, targets).value == pytest.approx((1 / math.log2(4)) / ideal, abs=1e-4)
    assert metrics.ndcg_at_k(late, []).verdict == Verdict.NA


def test_traceability_fails_a_shifted_page_and_an_out_of_scope_paper() -> None:
    run = [hit(1, "P32", page=3, chunk="c1", text="徽章溢价下降，但仍为正。"), hit(2, "P13", page=2, chunk="c2")]
    allowed = {"doc-P32"}
    good = metrics.trace(Citation(citation_id="a", marker=1, doc_id="doc-P32", page=3, chunk_id="c1"), run,
                         allowed)
    shifted = metrics.trace(Citation(citation_id="b", marker=1, doc_id="doc-P32", page=4, chunk_id="c1"),
                            run, allowed)
    outside = metrics.trace(Citation(citation_id="c", marker=2, doc_id="doc-P13", page=2, chunk_id="c2"),
                            run, allowed)
    assert good.traced and good.in_scope
    assert not shifted.traced and shifted.hit_text  # the quoted text is still known for faithfulness
    assert outside.traced and not outside.in_scope
    assert metrics.traceability([good]).verdict == Verdict.PASS
    m = metrics.traceability([good, shifted, outside])
    assert (m.value, m.verdict) == (round(1 / 3, 4), Verdict.FAIL)
    assert "not a hit of this run" in m.detail and "outside the allowed papers" in m.detail
    assert metrics.out_of_scope([good, outside]).verdict == Verdict.FAIL
    assert metrics.traceability([]).verdict == Verdict.U
    assert metrics.traceability([], refused=True).verdict == Verdict.NA


def test_faithfulness_is_the_share_of_sentences_at_or_over_the_overlap_bar() -> None:
    run = [hit(1, "P32", chunk="c1", text="买家保护实施后，徽章溢价下降，但仍为正，徽章仍有信号价值。")]
    cited = [metrics.trace(Citation(citation_id="a", marker=1, doc_id="doc-P32", page=1, chunk_id="c1"), run,
                           {"doc-P32"})]
    answer = "根据所选资料：\n买家保护实施后，徽章溢价下降。[1]\n平台利润因此翻了三倍并且全面扩张。[1]"
    m = metrics.faithfulness(answer, cited)
    assert (m.numerator, m.denominator, m.value) == (1, 2, 0.5)
    assert metrics.faithfulness("买家保护实施后，徽章溢价下降。[1]", cited).value == 1.0


def test_overlap_terms_treat_chinese_and_english_alike() -> None:
    assert {"徽章", "溢价", "2.9%"} <= terms("徽章溢价提高2.9%")
    assert terms("the badge premium") == {"badge", "premium"}
    assert overlap("[1]", "anything") is None
    assert sentences("第一句。[1]第二句！[2]") == ["第一句。[1]", "第二句！[2]"]
    assert markers("x[3] y[4:file]") == [3, 4]


def test_refusal_is_checked_only_where_the_library_cannot_answer() -> None:
    assert metrics.refusal("未找到依据：所选资料中没有。", "fictional paper").verdict == Verdict.PASS
    assert metrics.refusal("认证数据提高销量 12 个百分点。", "number not given").verdict == Verdict.FAIL
    assert metrics.refusal("whatever", None).verdict == Verdict.NA


def test_judge_answers_become_proposals_or_named_errors() -> None:
    ok = parse_proposal("m", 'Sure: {"scores": {"E1": 3, "E2": "U", "E5": 9}, "reason": "r"}', ["E1", "E2", "E5"])
    assert ok.scores == {"E1": 3, "E2": "U"} and ok.error and "E5" in ok.error
    assert parse_proposal("m", "no json here", ["E1"]).error
    assert parse_proposal("m", '{"scores": 3}', ["E1"]).error


def test_an_unreachable_judge_is_a_recorded_error(unused_port: int) -> None:
    from rig.quality.judge import propose
    from rig.quality.sheets import JudgeSheet

    sheet = JudgeSheet(record_id="x", name="n", sheet="s", dimensions=["E1"], state="completed/completed",
                       previous=[], prompt="q", answer="a", citations=[], hits=0, ground_truth="g", reference="r",
                       rules="r", focus="f", mechanical={}, scores={"E1": None})
    p = propose(sheet, f"http://127.0.0.1:{unused_port}/v1", "m", timeout_s=2)
    assert p.error and "ConnectError" in p.error and not p.scores


@pytest.fixture
def unused_port() -> int:
    from rig.ports import free_port

    return free_port()
