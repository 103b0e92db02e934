"""The retrieval tool: ranking finds the reference page, scope and permissions hold inside the query."""

from __future__ import annotations

import pytest

from rig.errors import TargetHTTPError
from tests.conftest import LiveWorkbench


def test_percent_query_returns_the_abstract_page_of_p32(live: LiveWorkbench) -> None:
    p32 = live.corpus.doc("P32")
    result = live.adapter.search(live.auth_a, live.corpus.project_id, ["2.9%"], scope=[p32])
    hits = result.results[0].hits
    assert result.results[0].ok and hits
    assert (hits[0].doc_id, hits[0].page) == (p32, 1)
    assert "2.9%" in hits[0].text
    assert [s.name for s in result.stages] == ["encode", "query", "expand"]


def test_scope_filters_every_hit(live: LiveWorkbench) -> None:
    scope = [live.corpus.doc("P21"), live.corpus.doc("P30")]
    result = live.adapter.search(live.auth_a, live.corpus.project_id, ["used car warranty auction 二手车"],
                                 scope=scope)
    hits = result.results[0].hits
    assert hits and {h.doc_id for h in hits} <= set(scope)
    unscoped = live.adapter.search(live.auth_a, live.corpus.project_id, ["used car warranty auction 二手车"])
    assert {h.doc_id for h in unscoped.results[0].hits} - set(scope), "without a scope other papers should match"


def test_cross_language_question_finds_the_english_paper(live: LiveWorkbench) -> None:
    p21 = live.corpus.doc("P21")
    hits = live.adapter.search(live.auth_a, live.corpus.project_id, ["卖家口碑更成熟时，二手车保修溢价怎么变？"],
                               scope=None).results[0].hits
    assert p21 in {h.doc_id for h in hits[:3]}
    assert any(h.doc_id == p21 and h.page == 2 for h in hits)


def test_every_result_maps_back_to_its_query_and_duplicates_merge(live: LiveWorkbench) -> None:
    p32 = live.corpus.doc("P32")
    queries = ["buyer protection badge premium", "badge signalling value", "buyer protection badge premium"]
    result = live.adapter.search(live.auth_a, live.corpus.project_id, queries, scope=[p32])
    assert result.proposed_calls == 3 and result.executed_calls == 2
    assert [r.query for r in result.results] == queries
    assert len({r.tool_call_id for r in result.results}) == 3
    assert result.results[0].hits == result.results[2].hits


def test_history_contextualises_a_follow_up(live: LiveWorkbench) -> None:
    p21 = live.corpus.doc("P21")
    history = [{"role": "user", "content": "保修与卖家声誉如何共同影响二手车价格？"}]
    plain = live.adapter.search(live.auth_a, live.corpus.project_id, ["那对职业车商也一样吗？"], scope=[p21])
    with_history = live.adapter.search(live.auth_a, live.corpus.project_id, ["那对职业车商也一样吗？"],
                                       scope=[p21], history=history)
    assert with_history.model_extra and with_history.model_extra["retrieval_model_requests"] == 1
    assert len(with_history.results[0].hits) >= len(plain.results[0].hits)


def test_no_hit_from_a_document_the_caller_cannot_read(live: LiveWorkbench) -> None:
    b_project = live.adapter.create_project(live.auth_b, "B's own")
    result = live.adapter.search(live.auth_b, b_project, ["buyer protection"], scope=[live.corpus.doc("P32")])
    assert result.results[0].hits == []
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.search(live.auth_b, live.corpus.project_id, ["buyer protection"])
    assert err.value.status == 404
