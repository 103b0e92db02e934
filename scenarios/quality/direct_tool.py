"""Quality cases 专家-01…10: the retrieval tool called directly, not through the chat.

What it does: sends the case's query to the target's direct search entry with no scope (the server sets
it: the whole library), and for 专家-10 with the prior user question as history.
Expects: the case's papers among the first 10 hits (recall@10) and near the top (nDCG@10).
Without a direct entry the case is NOT_RUN: a chat answer never stands in for a tool result.
Evidence: the request, every hit in rank order with its text, the tool's stages, T2 round trip.
"""

from __future__ import annotations

import re

from rig.measure import search_measures
from rig.quality import CaseDriver, metrics, scenario
from rig.results import RankedHit
from rig.verdict import Verdict
from scenarios.quality.asking import listed_tcodes

_PRIOR_QUESTION = re.compile(r"上一问“(.+?)”")
NOT_APPLICABLE = "not applicable: a direct tool call has no run"


def history_of(preparation: str) -> list[dict[str, str]] | None:
    """The prepared conversation history a case names (`用户上一问“…”`), as the tool's `history`."""
    m = _PRIOR_QUESTION.search(preparation)
    return [{"role": "user", "content": m.group(1)}] if m else None


@scenario("direct_tool")
def direct_tool(driver: CaseDriver) -> None:
    with driver.turn(0) as ctx:
        record = ctx.base_record("direct_tool")
        if not ctx.caps.direct_search:
            record.state = "NOT_RUN"
            ctx.item("direct_search", Verdict.NOT_RUN,
                     "the target has no direct search entry; a chat answer is not a tool result")
            ctx.evidence("quality_turn", f"{record.record_id}: NOT_RUN", record)
            return
        history = history_of(ctx.turn.preparation)
        result = ctx.adapter.search(ctx.a, ctx.project, [ctx.turn.prompt], scope=None, history=history)
        record.fixture = {"scope": "server (whole library)", "history": history}
        for call in result.results:
            for h in call.hits:
                record.hits.append(RankedHit(rank=len(record.hits) + 1, doc_id=h.doc_id,
                                             paper_id=h.paper_id or ctx.paper_of(h.doc_id), page=h.page,
                                             chunk_id=h.chunk_id, score=h.score, text=h.text))
        failed = [c.error for c in result.results if not c.ok]
        record.state = "searched" if not failed else f"search failed: {failed[0]}"
        targets = ctx.turn.allowed_paper_ids
        record.metrics = [
            metrics.Metric(name="search_ok", verdict=Verdict.of(not failed),
                           detail=f"{len(result.results)} result(s), {len(record.hits)} hits"),
            metrics.recall_at_k(record.hits, targets),
            metrics.ndcg_at_k(record.hits, targets),
        ]
        ctx.measures(search_measures(result))
        record.tcodes = listed_tcodes(record.performance_codes, {"T2", "T11"},
                                      {"T8": NOT_APPLICABLE, "T12": NOT_APPLICABLE + " (no model tokens)",
                                       "T13": NOT_APPLICABLE + " (no model cost)"})
        ctx.record(record)
