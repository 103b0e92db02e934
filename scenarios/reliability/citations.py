"""引用核验 — citation verification (reliability cases 27–32)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from rig.adapters import Citation, Located
from rig.gate import CaseContext, case, kept, snapshot
from rig.pdftext import occurrences_on_page, pages_containing, squash
from rig.verdict import Verdict
from scenarios.reliability.steps import (
    answer_cited,
    answer_of,
    citation_on_its_page,
    file_for_doc,
    saved_answer,
    with_pages,
)


def _ask_citations(ctx: CaseContext, doc_ids: list[str], question: str, item: str
                   ) -> tuple[str, list[Citation] | None]:
    """Ask about `doc_ids`; the answer's citations of them (None, with item `item` U, when the rig could not link
    the saved answer). A target that cannot keep a question to chosen papers (no scope) may cite others too: only
    the citations of these papers are judged here."""
    opened = ctx.open_session(ctx.a, doc_ids)
    run = ctx.chat(ctx.a, opened.session_id, question)
    answer = answer_cited(ctx, opened.session_id, run, item=item)
    if answer is None:
        return opened.session_id, None
    cites = list(answer.citations)
    if ctx.caps.missing("scope"):
        cites = [c for c in cites if c.doc_id in doc_ids]
    return opened.session_id, cites


def _highlight_matches(ctx: CaseContext, citation: Citation, located: Located) -> bool:
    """Every highlight covers exactly the quote in the page text the rig downloads itself."""
    if citation.page is None:
        return False
    text = ctx.adapter.page_text(ctx.a, citation.doc_id, citation.page).text
    return all(h.page == citation.page and squash(text[h.start:h.end]) == squash(citation.quote)
               for h in located.highlights)


def _original_and_page(ctx: CaseContext, c: Citation, paper_id: str, page: int) -> None:
    """Where the target names no page: opening the citation's source gives the original file (downloaded from
    the target, compared byte for byte with what the rig uploaded), and the quote stands once, on `page` of it.
    A target that serves no originals is held to the document its citation names: the rig's upload of the paper
    (its ledger), with the quote once on `page` of the file the rig uploaded."""
    if ctx.caps.missing("download"):
        e = ctx.observe("the cited source, by the rig's upload ledger (the target serves no originals)", {
            "quote": c.quote, "cited_doc": ctx.paper_of(c.doc_id), "page": page, "pages": "rig_derived",
            "identity": "the rig's upload ledger (file name → document id)"})
        ctx.item("right_file_and_page", c.doc_id == ctx.doc(paper_id),
                 f"the citation names the document the rig uploaded as {paper_id}, and its quote stands once, on "
                 f"physical page {page} of that file (page derived by the rig: the target names none; no original "
                 "to download, so no byte comparison)", e, seen={"cited": ctx.paper_of(c.doc_id), "page": page})
        return
    original = ctx.adapter.download(ctx.a, c.doc_id)
    digest = hashlib.sha256(original).hexdigest()
    expected = ctx.manifest.paper(paper_id).sha256
    e = ctx.observe("the cited source opened as its original", {
        "quote": c.quote, "cited_doc": ctx.paper_of(c.doc_id), "sha256": digest, "uploaded_sha256": expected,
        "page": page, "pages": "rig_derived"})
    ctx.item("right_file_and_page", c.doc_id == ctx.doc(paper_id) and digest == expected,
             f"the citation opens {paper_id}'s original, byte for byte, and its quote stands once, on physical page "
             f"{page} (page derived by the rig: the target names none)", e,
             seen={"cited": ctx.paper_of(c.doc_id), "sha256_equal": digest == expected, "page": page})


@case(27, "可靠性-27-1", papers=("P32",))
def unique_quote_located(ctx: CaseContext) -> None:
    """Take a citation whose quote is a unique continuous sentence of P32's abstract and open its source.

    Expects: the right file and physical page; a highlight only for a unique match, anchored to the
    text (so it still corresponds after zooming). Evidence: quote, page, match state, highlight.
    """
    _, asked = _ask_citations(ctx, [ctx.doc("P32")], "买家保护以后，徽章还有信号价值吗？", "unique_quote_available")
    if asked is None:
        return
    cites, pages_from = with_pages(ctx, asked)
    path = ctx.fixture_path(paper_id="P32")
    # A quote that occurs exactly once in the whole original file, on its abstract page.
    unique = [(c, pages_containing(path, c.quote)) for c in cites if c.page is not None]
    unique = [(c, pages) for c, pages in unique if pages == [1] and occurrences_on_page(path, 1, c.quote) == 1]
    if not unique:
        e0 = ctx.observe("citations of the answer", [(c.page, c.quote[:60]) for c in cites])
        ctx.item("unique_quote_available", None, "no citation quoted a sentence that occurs once in the abstract", e0)
        return
    c, true_pages = unique[0]
    if pages_from == "rig_derived":  # the source opens as a file: the right original, the quote on one page of it
        _original_and_page(ctx, c, "P32", true_pages[0])
        ctx.lacks("unique_highlighted", "locate_citation")
        ctx.lacks("highlight_is_the_quote", "locate_citation")
        return
    if ctx.lacks("located", "locate_citation"):
        return
    located = ctx.adapter.locate_citation(ctx.a, c.citation_id)
    e = ctx.observe("locate", {"quote": c.quote, "cited_page": c.page, "located": located.model_dump(),
                               "true_page_in_original": true_pages[0]})
    ctx.item("right_file_and_page", located.doc_id == ctx.doc("P32") and c.page == true_pages[0] and
             located.page == true_pages[0], f"cited p.{c.page}, located p.{located.page}, true p.{true_pages[0]}", e)
    ctx.item("unique_highlighted", located.match == "unique" and len(located.highlights) == 1,
             f"match {located.match}, {len(located.highlights)} highlight(s)", e)
    ctx.item("highlight_is_the_quote", _highlight_matches(ctx, c, located),
             "the highlight covers exactly the quote in the page text (text-anchored, zoom-independent)", e,
             seen={"quote": c.quote[:60], "highlights": [(h.page, h.start, h.end) for h in located.highlights]})


@case(28, "可靠性-28-1", papers=("P35",))
def summary_with_reliable_page(ctx: CaseContext) -> None:
    """A claim drawn from P35's physical page 3, with its page cited: look at how it is located.

    Expects: the supporting passage of that page can be checked; highlight only when every match is
    unique; without reliable support the reading is kept honest. Evidence: claim, candidate sentences,
    match and display.
    """
    _, asked = _ask_citations(ctx, [ctx.doc("P35")], "卖家在打包发货时偷工减料属于什么问题？", "page3_citation")
    if asked is None:
        return
    cites, pages_from = with_pages(ctx, asked)
    on3 = [c for c in cites if c.page == 3]
    if not on3:
        e0 = ctx.observe("citations of the answer", {"pages": [c.page for c in cites], "pages_from": pages_from})
        # the answer the target saved cites page 3 nowhere: shown (a page the rig derived may simply not place)
        ctx.item("page3_citation", False if pages_from == "target" and cites else None,
                 f"no citation of physical page 3 (pages cited: {[c.page for c in cites]}; pages from: {pages_from})",
                 e0)
        return
    c = on3[0]
    if pages_from == "rig_derived":
        count = occurrences_on_page(ctx.fixture_path(paper_id="P35"), 3, c.quote)
        e = ctx.observe("page-3 claim (page derived by the rig)", {"quote": c.quote, "occurrences_on_page_3": count})
        ctx.item("reliable_page", count >= 1, "the claim rests on a passage that stands on physical page 3 of P35 "
                 "(page derived by the rig: the target names none)", e, seen={"quote": c.quote[:60], "on_page_3": count})
        ctx.lacks("highlight_only_if_unique", "locate_citation")
        return
    if ctx.lacks("located", "locate_citation"):
        return
    located = ctx.adapter.locate_citation(ctx.a, c.citation_id)
    count = occurrences_on_page(ctx.fixture_path(paper_id="P35"), 3, c.quote)
    e = ctx.observe("page-3 claim", {"quote": c.quote, "occurrences_on_page_3": count, "located": located.model_dump()})
    ctx.item("reliable_page", located.page == 3 and count >= 1, f"located p.{located.page}; quote occurs {count}x", e)
    if located.match == "unique":
        ok = count == 1 and _highlight_matches(ctx, c, located)
    else:
        ok = located.match in ("page_only", "multiple") and not located.highlights
    ctx.item("highlight_only_if_unique", ok, f"match {located.match} with {len(located.highlights)} highlight(s)", e)


@case(29, "可靠性-29-1", papers=("P32", "P32-DUPQUOTE"))
def no_page_and_duplicates(ctx: CaseContext) -> None:
    """Two variants: a file-level summary without a reliable page; a copy repeating one quoted sentence.

    Expects: no invented page and no arbitrary pick among repeated places; the original stays readable
    and the true state is shown. Evidence: granularity, the duplicate copy, both match results.
    """
    _, asked = _ask_citations(ctx, [ctx.doc("P32")], "请概括《Reputation and Regulations- Evidence from eBay》的主要发现",
                              "file_level_no_page")
    cites = asked or []
    whole = [c for c in cites if c.page is None]
    if whole:
        readable = len(ctx.adapter.download(ctx.a, whole[0].doc_id)) > 0 if not ctx.caps.missing("download") else None
        located = None if ctx.caps.missing("locate_citation") else ctx.adapter.locate_citation(ctx.a, whole[0].citation_id)
        e = ctx.observe("file-level citation", {"citation": whole[0].model_dump(), "original_downloadable": readable,
                                                "located": located.model_dump() if located else None})
        if located is None and readable is None:  # what the citation itself claims; the original cannot be opened
            ctx.item("file_level_no_page", True, "the citation names no page (it invents none)", e,
                     seen={"citation": whole[0].citation_id, "page": whole[0].page})
            ctx.lacks("original_readable", "download")
        elif located is None:  # no locate entry: what the citation itself claims, and the original still opens
            ctx.item("file_level_no_page", readable, "the citation names no page and the original opens", e,
                     seen={"citation": whole[0].citation_id, "page": whole[0].page, "original_opens": readable})
        else:
            ctx.item("file_level_no_page", located.match == "file_only" and located.page is None and
                     not located.highlights and readable, f"match {located.match}, page {located.page}", e)
    elif asked is not None:
        e = ctx.observe("citations of a whole-paper summary", [(c.page, c.quote[:60]) for c in cites])
        ctx.item("file_level_no_page", Verdict.U, "every citation carried a page; the file-level variant could not "
                 "be observed", e)
    if ctx.lacks("duplicate_not_picked", "citation_pages", "locate_citation"):
        return
    dup_doc = ctx.isolated("P32-DUPQUOTE")
    path = ctx.fixture_path(variant_id="P32-DUPQUOTE")
    _, dup_asked = _ask_citations(ctx, [dup_doc], "买家保护以后，徽章还有信号价值吗？", "duplicate_not_picked")
    if dup_asked is None:
        return
    dup_cites = dup_asked
    repeated = [c for c in dup_cites if c.page is not None and occurrences_on_page(path, c.page, c.quote) >= 2]
    if not repeated:
        e = ctx.observe("duplicate copy citations", [(c.page, c.quote[:60]) for c in dup_cites])
        ctx.item("duplicate_not_picked", None, "no citation quoted the repeated sentence", e)
        return
    c = repeated[0]
    located = ctx.adapter.locate_citation(ctx.a, c.citation_id)
    e = ctx.observe("duplicated quote", {"quote": c.quote, "occurrences": occurrences_on_page(path, c.page or 0, c.quote),
                                         "located": located.model_dump()})
    ctx.item("duplicate_not_picked", located.match != "unique" and not located.highlights,
             f"match {located.match}, {len(located.highlights)} highlight(s)", e)


@case(30, "可靠性-30-1", papers=("P35", "P35-BLANK"))
def physical_pages_and_dedup(ctx: CaseContext) -> None:
    """Cite two different pages of P35, in the original and in the copy with a blank page inserted.

    Expects: the source list may merge by paper but each in-text citation keeps its own physical page;
    a blank page does not shift later pages. Evidence: physical page order, source map, clicks.
    """
    question = "用中文区分逆向选择和道德风险，各给出文中一个例子。"
    for label, doc in (("original", ctx.doc("P35")), ("blank_page_copy", ctx.isolated("P35-BLANK"))):
        sid, asked = _ask_citations(ctx, [doc], question, f"{label}_distinct_pages")
        if asked is None:
            continue
        cites, pages_from = with_pages(ctx, asked)
        paged = [c for c in cites if c.page is not None]
        pages = sorted({c.page for c in paged if c.page is not None})
        on_page = {c.citation_id: citation_on_its_page(ctx, c) for c in paged}
        located = ({c.citation_id: ctx.adapter.locate_citation(ctx.a, c.citation_id).page for c in paged}
                   if not ctx.caps.missing("locate_citation") else {})
        e = ctx.observe(f"{label}: pages and clicks", {"pages": pages, "pages_from": pages_from,
                                                        "quote_on_cited_page": on_page, "located_pages": located,
                                                        "blank_pages": ctx.manifest.variant("P35-BLANK").blank_pages
                                                        if label != "original" else []})
        in_text = [c for c in cites if c.quote.strip()]
        if pages_from == "rig_derived" and not in_text:  # named as a source only: no in-text citation to place
            ctx.item(f"{label}_distinct_pages", Verdict.U, "the answer names the paper as a source but cites none of "
                     "its text, so no in-text citation had a page to keep", e, seen={"sources": len(cites)})
        else:
            ctx.item(f"{label}_distinct_pages", len(pages) >= 2, "in-text citations keep distinct physical pages" +
                     (" (pages derived by the rig: the target names none)" if pages_from == "rig_derived" else ""), e,
                     seen={"cited_pages": pages})
        ctx.item(f"{label}_page_identity", bool(paged) and all(on_page.values()) and
                 all(located.get(c.citation_id) == c.page for c in paged),
                 "every quote is on its cited physical page and opens there", e,
                 needs=("citation_pages", "locate_citation"),
                 seen={"cited_pages": {c.citation_id: c.page for c in paged}, "located_pages": located,
                       "quote_off_its_page": [k for k, v in on_page.items() if not v]})
        _hit_pages(ctx, label, sid)
        if "json" in ctx.caps.export and not ctx.lacks(f"{label}_source_list", "export_sources"):
            sources = ctx.adapter.read_export(ctx.adapter.export(ctx.a, sid, "json")).sources
            mine = [x for x in sources if x.doc_id == doc]
            e2 = ctx.observe(f"{label}: export source list", [x.model_dump() for x in sources])
            ctx.item(f"{label}_source_list", len(mine) == 1 and sorted(mine[0].pages) == pages,
                     "one source entry for the paper, listing its cited pages", e2,
                     seen={"entries": len(mine), "listed_pages": [m.pages for m in mine], "cited_pages": pages})


def _hit_pages(ctx: CaseContext, label: str, session_id: str) -> None:
    """The pages the target's own run record gives its retrieved passages: each passage stands on the physical
    page named (so a blank page shifts nothing), by the rig's reading of the original."""
    if ctx.lacks(f"{label}_hit_pages", "run_tool_calls", "sessions"):
        return
    session = ctx.adapter.session(ctx.a, session_id)
    run_id = next((m.run_id for m in session.messages if m.role == "assistant" and m.run_id), None)
    if run_id is None:
        return
    hits = [h for c in ctx.adapter.run(ctx.a, run_id).tool_calls for h in c.hits if h.text]
    paged = [h for h in hits if h.page is not None]
    off = [(h.chunk_id, h.page) for h in paged if not occurrences_on_page(file_for_doc(ctx, h.doc_id), h.page or 0,
                                                                           h.text or "")]
    e = ctx.observe(f"{label}: retrieved passages on the pages the record names", {
        "hits": [(h.chunk_id, h.page) for h in hits], "off_their_page": off})
    if not paged:
        ctx.absent(f"{label}_hit_pages", "hit_pages", f"run {run_id}'s record names no page for its retrieved passages",
                   e)
        return
    ctx.showed("hit_pages", f"run {run_id}'s record: {len(paged)} hit(s) with pages", e)
    ctx.item(f"{label}_hit_pages", not off, "every retrieved passage stands on the physical page the record names",
             e, seen={"passages": len(paged), "off_their_page": off[:5]})


@case(31, "可靠性-31-1", papers=("P32", "P32-CHANGED"))
def rewrite_and_cache_invalidation(ctx: CaseContext) -> None:
    """Locate a P32 citation twice, then change the claim, then use a copy whose content changed.

    Expects: the same condition may reuse its result; a changed claim or file never keeps an old wrong
    highlight and the source relation stays right. Times are recorded, no latency bar is set.
    Evidence: content hashes, claims, first/second open times, cache state, locate results.
    """
    if ctx.caps.missing("citation_pages"):  # no page, no highlight: what stays checkable is the changed copy's source
        for name in ("same_condition_reused", "claim_change_fresh", "content_change_fresh"):
            ctx.lacks(name, "citation_pages", "locate_citation")
        _changed_copy_sources(ctx)
        return
    if ctx.lacks("page_level_citations", "locate_citation"):  # every other item rests on opening a citation
        return
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.chat(ctx.a, opened.session_id, "总福利提高2.9%指什么？")
    answer = answer_of(ctx, opened.session_id, run.run_id, item="citation_available")
    if answer is None:
        return
    paged = [c for c in answer.citations if c.page is not None]
    if not paged:
        e0 = ctx.observe("the saved answer's citations", [(c.citation_id, c.page) for c in answer.citations])
        ctx.item("citation_available", False, "the answer carried no paged citation", e0)
        return
    c = paged[0]
    times, results = [], []
    for _ in range(2):
        began = time.perf_counter_ns()
        results.append(ctx.adapter.locate_citation(ctx.a, c.citation_id))
        times.append((time.perf_counter_ns() - began) / 1e6)
    e = ctx.observe("first and second open", {"quote": c.quote, "times_ms": times,
                                              "cache": [r.cache for r in results],
                                              "results": [r.model_dump() for r in results]})
    same = results[0].model_dump(exclude={"cache"}) == results[1].model_dump(exclude={"cache"})
    ctx.item("same_condition_reused", same and _highlight_matches(ctx, c, results[1]),
             f"identical result on the second open (cache: {results[1].cache})", e)
    rewrite = ctx.chat(ctx.a, opened.session_id, "把刚才这句改成我自己的概括，不加引号，但保留准确的引用。", revision=True)
    new_answer = answer_of(ctx, opened.session_id, rewrite.run_id, item="claim_change_fresh")
    if new_answer is not None:
        changed = [x for x in new_answer.citations if x.page is not None and x.quote != c.quote]
        checks = [(x.quote, _highlight_matches(ctx, x, ctx.adapter.locate_citation(ctx.a, x.citation_id)))
                  for x in changed]
        e2 = ctx.observe("after the claim changed", checks)
        ctx.item("claim_change_fresh", bool(checks) and all(ok for _, ok in checks),
                 f"{len(checks)} changed citation(s), highlights match their new quotes", e2)
    copy = ctx.isolated("P32-CHANGED")
    sid2 = ctx.open_session(ctx.a, [copy]).session_id
    run2 = ctx.chat(ctx.a, sid2, "总福利提高2.9%指什么？")
    copy_answer = answer_of(ctx, sid2, run2.run_id, item="content_change_fresh")
    if copy_answer is None:
        return
    copy_cites = [x for x in copy_answer.citations if x.page is not None]
    path = ctx.fixture_path(variant_id="P32-CHANGED")
    rows: list[dict[str, Any]] = []
    for x in copy_cites:
        loc = ctx.adapter.locate_citation(ctx.a, x.citation_id)
        rows.append({"quote": x.quote, "cache": loc.cache, "highlight_ok": _highlight_matches(ctx, x, loc),
                     "sha256": loc.content_sha256, "in_changed_file": occurrences_on_page(path, x.page or 0, x.quote)})
    expected_sha = ctx.manifest.variant("P32-CHANGED").sha256
    e3 = ctx.observe("content-changed copy", rows)
    ctx.item("content_change_fresh", bool(rows) and all(r["highlight_ok"] for r in rows),
             "highlights match the changed file's text", e3,
             seen={"citations": len(rows), "highlight_mismatch": [r["quote"][:40] for r in rows if not r["highlight_ok"]]})
    ctx.item("source_relation_correct", bool(rows) and all(r["in_changed_file"] >= 1 and
                                                           r["sha256"] in (None, expected_sha) for r in rows),
             "quotes are on their pages of the changed file, and the content hash is the copy's", e3,
             seen={"citations": len(rows), "hashes": sorted({str(r["sha256"])[:12] for r in rows}),
                   "copy_hash": expected_sha[:12], "not_on_page": [r["quote"][:40] for r in rows if r["in_changed_file"] < 1]})


def _changed_copy_sources(ctx: CaseContext) -> None:
    """A copy of P32 whose content changed: every quote its answer cites stands in the changed file (pages derived
    by the rig), so no text of the old version is served as the new one's."""
    copy = ctx.isolated("P32-CHANGED")
    _, asked = _ask_citations(ctx, [copy], "总福利提高2.9%指什么？", "source_relation_correct")
    if asked is None:
        return
    cited = asked
    cites, _ = with_pages(ctx, [x for x in cited if x.quote.strip()])  # in-text citations: each quotes a claim
    path = ctx.fixture_path(variant_id="P32-CHANGED")
    found = {x.citation_id: len(pages_containing(path, x.quote)) for x in cites}
    e = ctx.observe("content-changed copy (pages derived by the rig)",
                    [{"quote": x.quote, "page": x.page, "pages_in_changed_file": found[x.citation_id]} for x in cites]
                    + [{"sources_without_quote": len(cited) - len(cites)}])
    ctx.item("source_relation_correct", all(found.values()) if cites else None,
             "every cited quote stands in the changed copy's own original", e,
             seen={"citations": len(cites), "not_in_changed_file": [x.quote[:40] for x in cites if not found[x.citation_id]]})


@case(32, "可靠性-32-1", papers=("P21", "P32"))
def removed_source_not_back(ctx: CaseContext) -> None:
    """A session citing P21 and P32; drop P21 from the scope, rewrite, and look at the new answer.

    Expects: the removed P21 does not come back in the new answer; valid P32 citations stay and history
    stays traceable. (Physically deleting from the index is a separate check.) Evidence: scope, before/
    after citation maps, the refreshed result.
    """
    p21, p32 = ctx.doc("P21"), ctx.doc("P32")
    opened = ctx.open_session(ctx.a, [p21, p32])
    first = ctx.chat(ctx.a, opened.session_id, "保修和买家保护分别怎样影响声誉溢价？")
    saved = snapshot(ctx, [opened.session_id], [first.run_id])
    ctx.adapter.set_scope(ctx.a, opened.session_id, [p32])
    kept(ctx, saved, "scope change")  # the history keeps what it cited: a scope change decides later answers
    second = ctx.chat(ctx.a, opened.session_id, "只保留买家保护那篇，重写一段。", revision=True)
    session = ctx.adapter.session(ctx.a, opened.session_id)
    first_saved = saved_answer(ctx, session, first.run_id, item="precondition_both_cited")
    second_saved = saved_answer(ctx, session, second.run_id, item="removed_not_back") if first_saved else None
    if first_saved is None or second_saved is None:
        return
    old, new = first_saved.citations, second_saved.citations
    e = ctx.observe("citation maps", {"before": [(c.doc_id, c.page) for c in old],
                                      "after": [(c.doc_id, c.page) for c in new], "scope_after": [p32]})
    cited_first = {c.doc_id for c in old}
    if not cited_first >= {p21, p32}:  # the set-up the case needs; not a promise of the target (U, not FAIL)
        ctx.item("precondition_both_cited", Verdict.U, "the first answer did not cite both P21 and P32 "
                 f"(cited {sorted(cited_first)}), so a removed source coming back cannot be observed", e)
        return
    ctx.item("precondition_both_cited", True, "the first answer cited both", e)
    ctx.item("removed_not_back", bool(new) and p21 not in {c.doc_id for c in new}, "no P21 in the new answer", e,
             seen={"new_citations": [(ctx.paper_of(c.doc_id), c.page) for c in new]})
    ctx.item("kept_source_valid", any(c.doc_id == p32 for c in new) and all(citation_on_its_page(ctx, c)
                                                                           for c in new if c.page is not None),
             "P32 citations remain and check out on their pages", e,
             seen={"new_citations": [(ctx.paper_of(c.doc_id), c.page) for c in new],
                   "off_their_page": [(c.page, c.quote[:40]) for c in new if c.page is not None
                                      and not citation_on_its_page(ctx, c)]})
    ctx.item("history_traceable", any(c.doc_id == p21 for c in old), "the old answer still shows P21", e,
             seen={"old_citations": [(ctx.paper_of(c.doc_id), c.page) for c in old]})
