"""资料入库 — material ingest (reliability cases 6–11)."""

from __future__ import annotations

import hashlib
from typing import Any

from rig.adapters import Document
from rig.errors import TargetHTTPError
from rig.gate import CaseContext, case
from rig.measure import ingest_measures, search_measures
from rig.target import IngestEntry
from rig.verdict import Verdict
from scenarios.reliability.steps import attempt, citation_grounded, hit_in_original, hit_pages, saved_answer

CONTROL_QUERY = "2.9%"  # a search any indexed P32 answers


def document_or_none(ctx: CaseContext, doc_id: str) -> Document | None:
    """A's document by id, None when the target does not know it."""
    try:
        return ctx.adapter.document(ctx.a, doc_id)
    except TargetHTTPError as exc:
        if exc.status in (404, 410):
            return None
        raise


def _entry(ctx: CaseContext, *, paper: str | None = None, variant: str | None = None,
           project: str | None = None) -> IngestEntry:
    for e in ctx.target.setup.ingest:
        if (variant and e.variant_id == variant) or (paper and e.paper_id == paper and e.variant_id is None):
            if project is None or e.project == project:
                return e
    raise KeyError(paper or variant)


@case(6, "可靠性-06-1", codes=("T1",), papers=("*",), needs=("upload",))
def inventory_of_28(ctx: CaseContext) -> None:
    """Import the 28 papers into a project of their own, record each file id and status, open each original.

    Expects: no silent omission, originals byte-identical, and no parse failure reported as fully
    searchable. Evidence: a 28-line ledger (file, id, status, pages, hash check) and T1 per file.
    """
    project = ctx.target.setup.project_a
    listed = {d.doc_id: d for d in ctx.adapter.documents(ctx.a, project)}
    ledger: list[dict[str, Any]] = []
    missing, mismatched, false_ready, misreported = [], [], [], []
    downloads = not ctx.caps.missing("download")  # the originals open from the target, to compare byte for byte
    for paper in ctx.eval_set.papers:
        entry = ctx.manifest.paper(paper.paper_id)
        doc_id = ctx.target.setup.docs.get(paper.paper_id)
        doc = listed.get(doc_id or "")
        if doc is None and doc_id:  # not listed in the project: is it at least visible on its own, with its failure?
            visible = document_or_none(ctx, doc_id)
            if visible is not None and visible.status == "failed" and visible.error is not None:
                ledger.append({"paper_id": paper.paper_id, "file": paper.name, "doc_id": doc_id, "status": "failed",
                               "listed_in_project": False, "error": visible.error.model_dump()})
                continue
        if doc is None:
            missing.append(paper.paper_id)
            continue
        same = hashlib.sha256(ctx.adapter.download(ctx.a, doc.doc_id)).hexdigest() == entry.sha256 if downloads \
            else None
        if same is False:
            mismatched.append(paper.paper_id)
        if doc.status == "ready" and (not entry.text_pages or entry.image_pages or entry.broken_pages):
            false_ready.append(paper.paper_id)
        ing = _entry(ctx, paper=paper.paper_id, project=project)
        reported = doc.sha256 or ing.reported_sha256  # the target's own hash, where it gives one: compared with ours
        if reported and reported != entry.sha256:
            misreported.append(paper.paper_id)
        ledger.append({"paper_id": paper.paper_id, "file": paper.name, "doc_id": doc.doc_id, "status": doc.status,
                       "upload_name": ing.upload_name, "sha256": entry.sha256, "reported_sha256": reported,
                       "reused": ing.reused, "pages_total": doc.pages_total, "pages_with_text": doc.pages_with_text,
                       "sha256_matches": same, "t1_client_ms": ing.t1_client_ms, "t1_server_ms": ing.t1_server_ms,
                       "stages": [(s.name, s.ok) for s in doc.stages]})
        ctx.measures(ingest_measures(paper.paper_id, ing.t1_client_ms, ing.t1_server_ms))
    e = ctx.observe("28-paper ledger", ledger)
    ctx.item("inventory_complete", not missing and len(ledger) == 28,
             f"{len(ledger)} of 28 listed" + (f"; missing {missing}" if missing else ""), e)
    ctx.item("originals_identical", not mismatched, "every download matches its fixture sha256" if not mismatched
             else f"differs: {mismatched}", e, needs=("download",))
    ctx.declared("reported_hashes_match", "document_hashes", not misreported and all(r.get("reported_sha256") for r in
                 ledger if "stages" in r), "every document's sha256 as the target reports it equals the rig's own", e,
                 seen={"differ": misreported, "unreported": [r["paper_id"] for r in ledger
                                                            if "stages" in r and not r.get("reported_sha256")][:5]})
    ctx.item("no_false_ready", not false_ready, "no file without a full text layer is reported ready"
             if not false_ready else f"reported ready without full text: {false_ready}", e)
    processed = [row for row in ledger if "stages" in row]
    stamped = all(s[1] is not None for row in processed for s in row["stages"])
    ctx.declared("stage_times_recorded", "ingest_stages", stamped and all(row["stages"] for row in processed),
                 "every processed file has per-stage start/end", e,
                 seen={"files": len(processed), "without_stages": [r.get("paper_id") for r in processed if not r["stages"]][:5],
                       "unstamped": [r.get("paper_id") for r in processed if any(x[1] is None for x in r["stages"])][:5]})


@case(7, "可靠性-07-1", codes=("T2",), papers=("P32",))
def body_text_searchable(ctx: CaseContext) -> None:
    """Search P32 with a question about the 2.9% welfare gain and check the hit against the original.

    Expects: the abstract/introduction is indexed, and the evidence and file identity agree with the
    original (an upload success alone proves nothing). Evidence: candidates, the rig's own page text.
    """
    doc = ctx.doc("P32")
    result = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, ["总福利提高2.9%是什么意思"], [doc])
    ctx.measures(search_measures(result))
    hits = [h for r in result.results for h in r.hits]
    path = ctx.fixture_path(paper_id="P32")
    reference = set(ctx.eval_set.paper("P32").reference_page_numbers)
    pages_of = {id(h): hit_pages(ctx, h, path) for h in hits if h.doc_id == doc}
    found = [h for h in hits if h.doc_id == doc and set(pages_of[id(h)]) & reference and "2.9" in h.text]
    derived = ctx.caps.missing("hit_pages") != []
    e = ctx.observe("candidates", [{"doc_id": h.doc_id, "page": h.page, "pages": pages_of.get(id(h)),
                                    "text": h.text[:200]} for h in hits] + ([{"pages": "rig_derived"}] if derived else []))
    ctx.item("indexed", bool(found), f"{len(found)} hit(s) on reference pages {sorted(reference)} mention 2.9"
             + (" (pages located by the rig: the target names none)" if derived else ""), e)
    verbatim = [h for h in found if hit_in_original(ctx, h, path)]
    e2 = ctx.observe("hit text vs the original page (rig's own extraction)",
                     [{"page": h.page, "pages": pages_of.get(id(h)), "in_original": h in verbatim} for h in found])
    ctx.item("evidence_matches_original", bool(verbatim) and len(verbatim) == len(found),
             f"{len(verbatim)}/{len(found)} hit texts occur on their page of the original", e2)
    listed = ctx.adapter.document(ctx.a, doc)
    ctx.declared("file_identity", "document_hashes",
                 listed.sha256 == ctx.manifest.paper("P32").sha256 and listed.paper_id in (None, "P32"),
                 "the hit's document is the P32 fixture (sha256)", e,
                 seen={"listed_sha256": listed.sha256[:16], "fixture_sha256": ctx.manifest.paper("P32").sha256[:16],
                       "paper_id": listed.paper_id})


@case(8, "可靠性-08-1", codes=("T1",), papers=("P15", "P16", "P32"))
def scans_and_cover_only(ctx: CaseContext) -> None:
    """Import P15 (scanned) and P16 (text cover, scanned body); check body searchability and the status.

    Expects: if body text is claimed, a search must find it; if not extractable, the status says so
    honestly and a cover alone never claims the full text; other papers stay usable.
    Evidence: status and page counts, body-text searches, a control search on P32.
    """
    project = ctx.target.setup.project_a
    for paper, body_query in (("P15", "good cars from bad ones price reflects average quality"),
                              ("P16", "education signal productivity wages employers")):
        entry = ctx.manifest.paper(paper)
        doc = ctx.adapter.document(ctx.a, ctx.doc(paper))
        hits = [h for r in ctx.adapter.search(ctx.a, project, [body_query], [doc.doc_id]).results for h in r.hits
                if h.doc_id == doc.doc_id]
        # a body hit: on a scanned page, by the page it names; a page-less one, by text the rig cannot find in the
        # file's own text layer (only the scanned body, read by OCR, can have given it)
        path = ctx.fixture_path(paper_id=paper)
        body_hits = [h for h in hits if (h.page in entry.image_pages if h.page is not None
                                         else not hit_in_original(ctx, h, path))]
        e = ctx.observe(f"{paper} status and body search", {
            "status": doc.status, "pages_total": doc.pages_total, "pages_with_text": doc.pages_with_text,
            "error": doc.error.model_dump() if doc.error else None, "text_pages_in_fixture": entry.text_pages,
            "body_hits": [(h.page, h.text[:80]) for h in body_hits]})
        if doc.status == "ready":
            ok = bool(body_hits)
            reason = "reported ready" + (" and its body is searchable (OCR)" if ok else
                                         " but its scanned body is not searchable")
        else:  # not claimed searchable: honest when it says why, and (where it counts pages) counts the text pages
            pages_ok = ctx.caps.missing("page_counts") or doc.pages_with_text == len(entry.text_pages)
            ok = doc.status in ("no_text", "partial", "failed") and doc.error is not None and bool(pages_ok)
            reason = (f"status {doc.status}, reason shown: {bool(doc.error)}"
                      + ("" if ctx.caps.missing("page_counts") else
                         f", {doc.pages_with_text} page(s) with text of {len(entry.text_pages)}"))
        ctx.item(paper, ok, reason, e)
        ing = _entry(ctx, paper=paper, project=project)
        ctx.measures(ingest_measures(paper, ing.t1_client_ms))
    control = ctx.adapter.search(ctx.a, project, [CONTROL_QUERY], [ctx.doc("P32")])
    on_p32 = [h for r in control.results for h in r.hits if h.doc_id == ctx.doc("P32")]
    e = ctx.observe("control search on P32", {"hits": len(on_p32)})
    ctx.item("others_usable", bool(on_p32), "P32 is still searchable", e, seen={"control_hits": len(on_p32)})


@case(9, "可靠性-09-1", codes=("T1", "T8"), papers=("X-CORRUPT", "P44-BROKEN", "isolated:P32"), needs=("upload",))
def parse_errors_and_partial(ctx: CaseContext) -> None:
    """In an isolated project: the P44 copy with a broken page, a corrupt PDF, and a normal P32 copy.

    Expects: P44 judged by what its main path really did; the corrupt file fails visibly; the normal
    file is not blocked with them; no false success. These fixtures are outside the 28.
    Evidence: both failure records and the normal file's record and search.
    """
    project = ctx.target.setup.project_isolated
    refusal = _entry(ctx, variant="X-CORRUPT")
    if refusal.refused and not refusal.doc_id:  # refused in the upload itself, no record kept: the refusal is visible
        e1 = ctx.observe("corrupt PDF: the upload was refused", refusal.model_dump(include={
            "file", "upload_name", "status", "error", "refused"}))
        ctx.item("corrupt_fails_visibly", True, "the corrupt file is refused in its upload, with the target's reason",
                 e1, seen={"refused": refusal.refused, "outcome": (refusal.error or {}).get("code")})
    else:
        corrupt = ctx.adapter.document(ctx.a, ctx.isolated("X-CORRUPT"))
        e1 = ctx.observe("corrupt PDF", {"status": corrupt.status, "error": corrupt.error.model_dump() if corrupt.error
                                         else None, "upload_refused": refusal.refused})
        ctx.item("corrupt_fails_visibly", corrupt.status == "failed" and corrupt.error is not None,
                 f"status {corrupt.status}, error {corrupt.error.code if corrupt.error else None}", e1)
    broken_entry = ctx.manifest.variant("P44-BROKEN")
    broken = ctx.adapter.document(ctx.a, ctx.isolated("P44-BROKEN"))
    e2 = ctx.observe("P44 with a broken page", {"status": broken.status, "pages_total": broken.pages_total,
                                                "pages_with_text": broken.pages_with_text,
                                                "broken_pages_in_fixture": broken_entry.broken_pages})
    if broken.status == "ready":
        ok, reason = False, "reported ready although a page's text layer cannot be decoded"
    else:
        ok = broken.status in ("partial", "failed") and (broken.pages_with_text or 0) <= len(broken_entry.text_pages)
        reason = f"status {broken.status} with {broken.pages_with_text} readable page(s)"
    ctx.item("partial_is_honest", ok, reason, e2)
    normal = ctx.adapter.document(ctx.a, ctx.isolated("P32"))
    hits = [h for r in ctx.adapter.search(ctx.a, project, [CONTROL_QUERY], [normal.doc_id]).results for h in r.hits
            if h.doc_id == normal.doc_id]
    e3 = ctx.observe("normal P32 copy in the same project", {"status": normal.status, "hits": len(hits)})
    ctx.item("normal_unaffected", normal.status == "ready" and bool(hits), f"status {normal.status}", e3)
    for key in ("X-CORRUPT", "P44-BROKEN", "P32"):
        ing = next((e for e in ctx.target.setup.ingest if e.role == "isolated" and
                    (e.variant_id == key or (key == "P32" and e.variant_id is None))), None)
        if ing is not None:
            ctx.measures(ingest_measures(key, ing.t1_client_ms, status=ing.status))


@case(10, "可靠性-10-1", papers=("P21", "P32"))
def subset_change(ctx: CaseContext) -> None:
    """Ask with P21 and P32 selected, then select only P32 and ask a follow-up.

    Expects: new retrieval and new citations follow the current selection; history stays traceable;
    nothing of P21 is re-attributed to P32. Evidence: each turn's selection, candidates and citations.
    """
    p21, p32 = ctx.doc("P21"), ctx.doc("P32")
    turns = ctx.eval_set.quality_case("专家", 23)
    opened = ctx.open_session(ctx.a, [p21, p32])
    first = ctx.chat(ctx.a, opened.session_id, turns[0].prompt)
    changed = ctx.adapter.set_scope(ctx.a, opened.session_id, [p32])
    e0 = ctx.observe("selection changed", {"before": [p21, p32], "effective_after": changed.effective_scope})
    second = ctx.chat(ctx.a, opened.session_id, turns[1].prompt, revision=True)
    assert second.detail is not None
    hit_docs = {h.doc_id for c in second.detail.tool_calls for h in c.hits}
    e1 = ctx.observe("second turn candidates", sorted(hit_docs))
    ctx.item("new_retrieval_filtered", changed.effective_scope == [p32] and hit_docs <= {p32},
             f"second-turn hits from {sorted(hit_docs)}", e0, e1)
    session = ctx.adapter.session(ctx.a, opened.session_id)
    second_saved = saved_answer(ctx, session, second.run_id, item="new_citations_filtered")
    first_saved = saved_answer(ctx, session, first.run_id, item="history_traceable")
    if second_saved is None or first_saved is None:
        return
    new, old = second_saved.citations, first_saved.citations
    e2 = ctx.observe("citations per turn", {"first": [(c.doc_id, c.page) for c in old],
                                            "second": [(c.doc_id, c.page) for c in new]})
    ctx.item("new_citations_filtered", bool(new) and {c.doc_id for c in new} <= {p32},
             f"second answer cites {sorted({c.doc_id for c in new})}", e2)
    ctx.item("history_traceable", bool(old) and {c.doc_id for c in old} >= {p21},
             "the first answer still shows its P21 citations", e2,
             seen={"first_answer_cites": sorted({ctx.paper_of(c.doc_id) for c in old})})

    wrong = [c.citation_id for c in new if not citation_grounded(ctx, c)]
    where = "its cited page" if not ctx.caps.missing("citation_pages") else "one page (derived by the rig)"
    e3 = ctx.observe("second-turn quotes in P32's original (rig's reading)", {
        "not_found": wrong, "pages": "target" if not ctx.caps.missing("citation_pages") else "rig_derived"})
    ctx.item("no_misattribution", bool(new) and not wrong, f"every new quote stands on {where} of P32's original", e3,
             seen={"citations": len(new), "not_standing_there": wrong[:5]})


RULES = {"(scope ∪ attachments) ∩ readable"}


@case(11, "可靠性-11-1", papers=("P32", "B"))
def permission_and_attachment_rule(ctx: CaseContext) -> None:
    """Combine a project selection with explicit attachments and check the effective material set.

    Expects: the backend's effective scope follows the product's declared combination rule and the
    permissions; without a declared rule the case stays BLOCKED (the eval set: do not guess).
    Evidence: the effective file list, the request, and the document ids returned.
    """
    rule = ctx.caps.scope_rule
    if not rule or rule not in RULES:
        e = ctx.observe("declared scope rule", {"scope_rule": rule})
        ctx.item("rule_declared", Verdict.BLOCKED, "missing capability: scope_rule (the target declares no "
                 "scope-combination rule the rig knows)"
                 if not rule else f"declared rule {rule!r} is not one the rig can check", e)
        return
    mine, shared, private = ctx.doc("P32"), ctx.target.setup.b_shared_doc, ctx.target.setup.b_private_doc
    opened = ctx.open_session(ctx.a, [mine], attachments=[shared, private])
    expected = [mine, shared]
    e = ctx.observe("effective scope", {"rule": rule, "requested": [mine], "attachments": [shared, private],
                                        "effective": opened.effective_scope,
                                        "dropped": [d.model_dump() for d in opened.dropped]})
    ctx.item("effective_scope_follows_rule", sorted(opened.effective_scope) == sorted(expected),
             f"effective {len(opened.effective_scope)} document(s), expected {len(expected)}", e)
    ctx.item("unreadable_dropped", [d.doc_id for d in opened.dropped] == [private], "B's private paper dropped", e,
             seen={"dropped": [d.doc_id for d in opened.dropped], "b_private": private})
    result = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, ["warranty buyer protection 保修 买家保护"],
                                opened.effective_scope)
    docs = {h.doc_id for r in result.results for h in r.hits}
    leak = attempt(lambda: ctx.adapter.page_text(ctx.a, private, 1))
    e2 = ctx.observe("retrieval within the effective scope", {"hit_docs": sorted(docs), "private_page": leak.status})
    ctx.item("retrieval_within_scope", bool(docs) and docs <= set(expected) and leak.denied,
             f"hits from {len(docs)} document(s), private page {leak.status}", e2)
