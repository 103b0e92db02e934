"""The retrieval tool `internal_search`: encode → query → expand, with scope and permissions enforced.

Used by the direct tool entry and by the agent loop alike.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from workbench.access import readable_doc_ids
from workbench.chaos import InjectedFault
from workbench.ids import new_id
from workbench.index import Chunk, Scored
from workbench.services import Services
from workbench.stages import SpanSource, StageLog
from workbench.text import search_tokens


@dataclass
class SearchOutcome:
    """What one internal_search call produced, in protocol shape, plus its counters."""

    tool_call_ids: list[str]
    proposed_calls: int
    executed_calls: int
    results: list[dict[str, Any]]
    stages: list[dict[str, Any]]
    embedding_requests: int = 0
    retrieval_model_requests: int = 0
    allowed_doc_ids: list[str] = field(default_factory=list)

    def to_api(self) -> dict[str, Any]:
        return {"tool_call_ids": self.tool_call_ids, "executed_calls": self.executed_calls,
                "proposed_calls": self.proposed_calls, "results": self.results, "stages": self.stages}


def allowed_documents(svc: Services, user_id: str, project_id: str | None, scope: list[str] | None) -> set[str]:
    """Documents a search may touch: the scope (or the project) intersected with what the user may read."""
    readable = readable_doc_ids(svc.db, user_id)
    if "scope_leak" in svc.defects:
        return readable
    if scope is None:
        rows = svc.db.all("SELECT doc_id FROM documents WHERE project_id=?", project_id)
        return {r["doc_id"] for r in rows} & readable
    return set(scope) & readable


def _group_queries(term_lists: list[list[str]]) -> list[list[int]]:
    """Merge near-identical queries (Jaccard ≥ 0.8 on their terms) into one execution."""
    groups: list[list[int]] = []
    for i, terms in enumerate(term_lists):
        mine = set(terms)
        for group in groups:
            other = set(term_lists[group[0]])
            union = mine | other
            if union and len(mine & other) / len(union) >= 0.8:
                group.append(i)
                break
        else:
            groups.append([i])
    return groups


def _doc_meta(svc: Services, doc_ids: set[str]) -> dict[str, str | None]:
    if not doc_ids:
        return {}
    marks = ",".join("?" * len(doc_ids))
    rows = svc.db.all(f"SELECT doc_id, paper_id FROM documents WHERE doc_id IN ({marks})", *doc_ids)
    return {r["doc_id"]: r["paper_id"] for r in rows}


def _expand(svc: Services, hit: Scored) -> str | None:
    """The hit widened to its neighbouring chunks on the same page, or None when there is nothing to add."""
    chunk = hit.chunk
    neighbours = [c for c in svc.index.chunks_of(chunk.doc_id)
                  if c.page == chunk.page and abs(c.seq - chunk.seq) == 1]
    if not neighbours:
        return None
    row = svc.db.one("SELECT text FROM pages WHERE doc_id=? AND page=?", chunk.doc_id, chunk.page)
    if row is None:
        return None
    text = row["text"]
    parts = sorted([chunk, *neighbours], key=lambda c: c.seq)
    start = text.find(parts[0].text)
    last = parts[-1]
    end_start = text.find(last.text, max(start, 0))
    if start < 0 or end_start < 0:
        return None
    return text[start:end_start + len(last.text)]


def _hit(chunk: Chunk, paper_id: str | None, score: float, text: str, expanded: bool) -> dict[str, Any]:
    return {"doc_id": chunk.doc_id, "paper_id": paper_id, "page": chunk.page, "chunk_id": chunk.chunk_id,
            "text": text, "score": round(score, 4), "expanded": expanded}


async def internal_search(
    svc: Services, *, user_id: str, project_id: str | None, queries: list[str], scope: list[str] | None,
    history: list[dict[str, str]] | None = None, tool_call_ids: list[str] | None = None,
    stages: StageLog | None = None, executions: SpanSource | None = None,
) -> SearchOutcome:
    """Run one tool call with one or more queries; every result names the tool call it answers. With
    `executions` (the direct entry's trace), each executed call is an `execute_tool internal_search` span."""
    stages = stages or StageLog(svc.metrics)
    ids = tool_call_ids or [new_id("tc") for _ in queries]
    allowed = allowed_documents(svc, user_id, project_id, scope)
    outcome = SearchOutcome(ids, len(queries), 0, [], [], allowed_doc_ids=sorted(allowed))
    first_record = len(stages.records)
    try:
        fault = await svc.faults.apply("internal_search", " ".join(queries))
    except InjectedFault as exc:
        outcome.results = _failed_results(svc, ids, queries, exc, allowed)
        outcome.stages = stages.records[first_record:]
        return outcome
    if fault is not None and fault.spec.mode == "repeat_same" and "results" in fault.memo:
        outcome.executed_calls = 1
        memo_hits: list[dict[str, Any]] = fault.memo["results"]  # type: ignore[assignment]
        outcome.results = [{"tool_call_id": tc, "query": q, "ok": True, "hits": [dict(h) for h in memo_hits]}
                           for tc, q in zip(ids, queries, strict=True)]
        return outcome
    try:
        hits_by_query = await _execute(svc, outcome, queries, history, allowed, stages, executions)
    except InjectedFault as exc:
        outcome.results = _failed_results(svc, ids, queries, exc, allowed)
        outcome.stages = stages.records[first_record:]
        return outcome
    if fault is not None and fault.spec.mode == "empty":
        hits_by_query = [[] for _ in queries]
    if "hit_page_shift" in svc.defects:
        hits_by_query = [[{**h, "page": h["page"] + 1} if h.get("page") else h for h in hits] for hits in hits_by_query]
    if fault is not None and fault.spec.mode == "repeat_same":
        fault.memo["results"] = hits_by_query[0]
    routed = list(ids)
    if "merged_results_swapped" in svc.defects and len(hits_by_query) > 1:
        hits_by_query[1] = [dict(h) for h in hits_by_query[0]]
    if "tool_result_misrouted" in svc.defects and len(routed) > 1:
        routed = routed[1:] + routed[:1]
    outcome.results = [{"tool_call_id": tc, "query": q, "ok": True, "hits": hits}
                       for tc, q, hits in zip(routed, queries, hits_by_query, strict=True)]
    outcome.stages = stages.records[first_record:]
    return outcome


async def _execute(svc: Services, outcome: SearchOutcome, queries: list[str], history: list[dict[str, str]] | None,
                   allowed: set[str], stages: StageLog, executions: SpanSource | None = None
                   ) -> list[list[dict[str, Any]]]:
    context_terms: list[str] = []
    async with stages.stage("encode") as rec:
        await svc.faults.apply("encode", " ".join(queries))
        if history:
            previous = [h["content"] for h in history if h.get("role") == "user"]
            if previous:
                context_terms = search_tokens(previous[-1])
                outcome.retrieval_model_requests += 1
        term_lists = [search_tokens(q) + context_terms for q in queries]
        groups = _group_queries(term_lists)
        outcome.executed_calls = len(groups) if "direct_calls_misreported" not in svc.defects or executions is None \
            else len(queries)  # the seeded defect: the direct entry reports every proposed call as executed
        outcome.embedding_requests += len(groups)
        rec["queries"] = len(queries)
    async with stages.stage("query") as rec:
        await svc.faults.apply("query", " ".join(queries))
        k = svc.settings.search_top_k
        group_hits = []
        for g in groups:
            with executions.span("execute_tool internal_search", {
                    "gen_ai.tool.name": "internal_search", "gen_ai.tool.call.id": outcome.tool_call_ids[g[0]],
                    "gen_ai.operation.name": "execute_tool", "tool.queries": len(g)}) if executions else nullcontext():
                group_hits.append(svc.index.search(term_lists[g[0]], allowed, k))
        rec["hits"] = sum(len(h) for h in group_hits)
    meta = _doc_meta(svc, {s.chunk.doc_id for hits in group_hits for s in hits})
    expansions: dict[str, str | None] = {}
    async with stages.stage("expand") as rec:
        try:
            await svc.faults.apply("expand", " ".join(queries))
            for hits in group_hits:
                for s in hits:
                    if s.chunk.chunk_id not in expansions:
                        expansions[s.chunk.chunk_id] = _expand(svc, s)
        except InjectedFault as exc:
            if "expand_error_hidden" not in svc.defects:
                rec["error"] = exc.code
            expansions = {}
    by_query: list[list[dict[str, Any]]] = [[] for _ in queries]
    for group, hits in zip(groups, group_hits, strict=True):
        rendered = []
        for s in hits:
            wide = expansions.get(s.chunk.chunk_id)
            rendered.append(_hit(s.chunk, meta.get(s.chunk.doc_id), s.score, wide or s.chunk.text, wide is not None))
        for i in group:
            by_query[i] = [dict(h) for h in rendered]
    return by_query


def _failed_results(svc: Services, ids: list[str], queries: list[str], exc: InjectedFault,
                    allowed: set[str]) -> list[dict[str, Any]]:
    if "fake_tool_success" in svc.defects:
        doc = sorted(allowed)[0] if allowed else "doc_unknown"
        fake = {"doc_id": doc, "paper_id": None, "page": 1, "chunk_id": f"{doc}:fabricated",
                "text": "检索成功：相关证据如下。", "score": 1.0, "expanded": False}
        return [{"tool_call_id": tc, "query": q, "ok": True, "hits": [dict(fake)]}
                for tc, q in zip(ids, queries, strict=True)]
    error = {"code": exc.code, "message": str(exc)}
    return [{"tool_call_id": tc, "query": q, "ok": False, "error": error, "hits": []}
            for tc, q in zip(ids, queries, strict=True)]
