"""The mechanical quality metrics of `workbench_eval_design.txt`, one case-turn at a time.

- recall@10: share of the target papers found among the first 10 hits;
- nDCG@10: ranking quality of those papers (binary relevance, a paper counted at its first hit);
- citation traceability: share of citations that point to a hit of this run *and* to an allowed paper
  (release bar 1.00);
- faithfulness: share of answer sentences whose term overlap with the hits they cite is at least 0.35
  (a line ending in a colon is a lead-in, not a sentence);
- refusal: an answer to a question the library cannot answer says so;
- out-of-scope citations: citations to papers outside the turn's allowed set (R2/R4), counted.

Each is reported per case-turn and never folded with another into a score.
"""

from __future__ import annotations

import math
import re

from rig.adapters.models import Citation
from rig.quality.overlap import markers, overlap, sentences
from rig.results.quality import CitedSource, Metric, RankedHit
from rig.verdict import Verdict

K = 10
FAITHFUL_OVERLAP = 0.35
TRACEABILITY_BAR = 1.0
_REFUSAL = re.compile(r"未找到依据|没有(?:能够)?(?:直接)?(?:回答|依据|提供)|无法(?:给出|回答|确认)|不能(?:引用|编造|代为)|"
                      r"no evidence|not (?:found|in the (?:selected )?materials)|cannot (?:find|answer)", re.I)


def _ranked_papers(hits: list[RankedHit], k: int) -> list[str | None]:
    return [h.paper_id for h in sorted(hits, key=lambda h: h.rank)[:k]]


def recall_at_k(hits: list[RankedHit], targets: list[str], k: int = K) -> Metric:
    """Share of target papers with at least one hit in the first k."""
    if not targets:
        return Metric(name=f"recall@{k}", verdict=Verdict.NA, detail="no target papers")
    found = {p for p in _ranked_papers(hits, k) if p is not None} & set(targets)
    return Metric(name=f"recall@{k}", value=round(len(found) / len(targets), 4), numerator=len(found),
                  denominator=len(targets), detail=f"found {sorted(found)} of {targets} in the first {k} hits")


def ndcg_at_k(hits: list[RankedHit], targets: list[str], k: int = K) -> Metric:
    """DCG of the first hit of each target paper (gain 1 at rank i: 1/log2(i+1)) over the ideal ranking."""
    if not targets:
        return Metric(name=f"nDCG@{k}", verdict=Verdict.NA, detail="no target papers")
    seen: set[str] = set()
    dcg = 0.0
    ranks = []
    for i, paper in enumerate(_ranked_papers(hits, k), start=1):
        if paper in targets and paper not in seen:
            seen.add(paper)
            dcg += 1 / math.log2(i + 1)
            ranks.append(f"{paper}@{i}")
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(targets), k) + 1))
    return Metric(name=f"nDCG@{k}", value=round(dcg / ideal, 4),
                  detail="first hits: " + (", ".join(ranks) or "none in the first 10"))


def trace(citation: Citation, run_hits: list[RankedHit], allowed_docs: set[str]) -> CitedSource:
    """Check one citation against the hits of this run and the allowed documents (a hit that names no page cannot
    contradict the citation's page, which may be the rig's own placement of the quote)."""
    doc, page, chunk = citation.doc_id, citation.page, citation.chunk_id
    if chunk:
        match = next((h for h in run_hits if h.chunk_id == chunk and h.doc_id == doc and h.page in (page, None)),
                     None)
        text_of = match or next((h for h in run_hits if h.chunk_id == chunk), None)  # the text it quotes
    else:  # a whole-file citation: any hit of that document
        match = text_of = next((h for h in run_hits if h.doc_id == doc), None)
    return CitedSource(**citation.model_dump(), traced=match is not None, in_scope=doc in allowed_docs,
                       hit_text=text_of.text if text_of else "")


def traceability(cited: list[CitedSource], *, refused: bool = False, scoped: bool = True) -> Metric:
    """Share of citations that are both traced to this run's hits and inside the allowed papers; for a target that
    cannot keep a question to chosen papers (`scoped` False), traced to this run's hits only (said in the detail)."""
    if not cited:
        if refused:
            return Metric(name="traceability", verdict=Verdict.NA, detail="the answer refuses and cites nothing")
        return Metric(name="traceability", verdict=Verdict.U, detail="the answer has no citation to trace")
    good = [c for c in cited if c.traced and (c.in_scope or not scoped)]
    bad = [f"[{c.marker}] {c.paper_id} p.{c.page}: " + ("not a hit of this run" if not c.traced else "outside the "
                                                        "allowed papers") for c in cited if c not in good]
    value = len(good) / len(cited)
    unscoped = "" if scoped else " (the allowed papers not checked: the target cannot keep a question to them)"
    return Metric(name="traceability", value=round(value, 4), numerator=len(good), denominator=len(cited),
                  verdict=Verdict.PASS if value >= TRACEABILITY_BAR else Verdict.FAIL,
                  detail=("; ".join(bad) or "every citation points to a hit of this run" +
                          (" and an allowed paper" if scoped else "")) + unscoped)


def faithfulness(answer: str, cited: list[CitedSource]) -> Metric:
    """Share of judged sentences whose overlap with the hits they cite (or, unmarked, all cited hits) is ≥ 0.35."""
    by_marker: dict[int, list[str]] = {}
    for c in cited:
        if c.marker is not None and c.hit_text:
            by_marker.setdefault(c.marker, []).append(c.hit_text)
    everything = " ".join(c.hit_text for c in cited if c.hit_text)
    judged = supported = 0
    weakest: list[str] = []
    for sentence in sentences(answer):
        if sentence.rstrip().endswith(("：", ":")):  # a lead-in ("根据所选资料：") introduces claims, makes none
            continue
        own = [t for m in markers(sentence) for t in by_marker.get(m, [])]
        value = overlap(sentence, " ".join(own) if own else everything)
        if value is None:
            continue
        judged += 1
        if value >= FAITHFUL_OVERLAP:
            supported += 1
        elif len(weakest) < 3:
            weakest.append(f"{value:.2f}: {sentence[:60]}")
    if not judged:
        return Metric(name="faithfulness", detail="no sentence long enough to judge")
    return Metric(name="faithfulness", value=round(supported / judged, 4), numerator=supported, denominator=judged,
                  detail=("below 0.35: " + " | ".join(weakest)) if weakest else "every judged sentence ≥ 0.35")


def refuses(answer: str) -> bool:
    """True when the answer says the materials hold no evidence for what was asked."""
    return bool(_REFUSAL.search(answer))


def refusal(answer: str, expected: str | None) -> Metric:
    """For a question the library cannot answer (`expected` says why): the answer must say so."""
    if expected is None:
        return Metric(name="refusal", verdict=Verdict.NA, detail="the question is answerable from the materials")
    said = refuses(answer)
    return Metric(name="refusal", value=1.0 if said else 0.0, verdict=Verdict.of(said),
                  detail=("says it has no evidence" if said else "answers without saying it has no evidence")
                  + f" ({expected})")


def out_of_scope(cited: list[CitedSource], *, scoped: bool = True) -> Metric:
    """Citations to papers outside the allowed set (R2/R4): counted, any one fails — BLOCKED (the count kept) for a
    target that cannot keep a question to chosen papers."""
    outside = [c for c in cited if not c.in_scope]
    detail = ", ".join(sorted({str(c.paper_id or c.doc_id) for c in outside})) or "none"
    return Metric(name="out_of_scope_citations", value=float(len(outside)), numerator=len(outside),
                  denominator=len(cited), verdict=Verdict.of(not outside) if scoped else Verdict.BLOCKED,
                  detail=detail if scoped else f"missing capability: scope (outside the allowed papers: {detail})")
